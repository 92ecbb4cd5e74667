package fifo

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fairshare"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// Policy is the FIFO policy for a scheduler binary: it keeps the
// sched_priv files and, each cycle, derives the settings in force from
// them and runs the pipeline.
type Policy struct {
	Pipeline *Pipeline // nil: DefaultPipeline
	// dflt is the DefaultPipeline used while Pipeline is nil, made once:
	// a pipeline holds no state of its own.
	dflt *Pipeline

	mu    sync.Mutex
	files *schedpriv.Files
	// fairShare is usesFairShare(files), worked out when they come
	// rather than at every cycle; fixed, when the files say the same at
	// every moment (no holidays year, no dedicated windows), is what
	// InputsAt derives from them, also worked out then.
	fairShare bool
	fixed     *Inputs
	// ledger counts fair-share usage while the configuration uses fair
	// share (nil before the first cycle that does).
	ledger *fairshare.Ledger
	// lastRR is where load_balancing_rr last started a job.
	lastRR string
	// tree is the resource_group tree fair share works on: a copy of the
	// file's, to which users without an entry are added as they appear
	// (kept from cycle to cycle; made again when the files change).
	tree *schedpriv.Tree
}

// Configure takes new sched_priv files.
func (p *Policy) Configure(files *schedpriv.Files, log core.Logger) error {
	p.mu.Lock()
	p.files, p.fairShare, p.fixed = files, usesFairShare(files), nil
	if timeless(files) {
		in := InputsAt(files, time.Time{})
		p.fixed = &in
	}
	p.tree = nil
	pl := p.Pipeline
	p.mu.Unlock()
	if len(files.Config.ActivationFilters) > 0 && (pl == nil || len(pl.Activations) == 0) {
		// A driver without the filter runner (the simulator) does not run
		// them: say so rather than schedule as if they had said yes.
		log.Warn("activation_filter lines are not run by this scheduler: jobs start without them")
	}
	return nil
}

// Schedule decides one cycle. With fair share in the configuration it
// first counts the usage of the world's jobs and decays it.
func (p *Policy) Schedule(w *core.World, _ core.Event, _ core.Logger) *core.Plan {
	p.mu.Lock()
	files := p.files
	pl := p.Pipeline
	if pl == nil {
		if p.dflt == nil {
			p.dflt = DefaultPipeline()
		}
		pl = p.dflt
	}
	var in Inputs
	if p.fixed != nil {
		in = *p.fixed
	} else {
		in = InputsAt(files, w.Now)
	}
	if p.fairShare {
		if p.ledger == nil {
			p.ledger = fairshare.NewLedger(nil)
		}
		p.ledger.SetHeld(files.Config.FairshareUsageRes == schedpriv.UsageHeld)
		p.ledger.Observe(w)
		interval, factor := files.Config.Decay()
		p.ledger.Decay(w.Now, interval, factor)
		if files.Groups != nil {
			if p.tree == nil {
				p.tree = files.Groups.Clone()
			}
			in.Standing = fairshare.NewStanding(p.tree, p.ledger.Usage())
		}
	}
	in.LastRR = p.lastRR
	// Whether the next cycle runs by the same rules in the same order.
	lasting := p.fixed != nil && !p.fairShare
	p.mu.Unlock()
	plan := pl.Schedule(w, in)
	if !lasting {
		// The next cycle may run by other rules (prime time, dedicated
		// time) or in another order (usage decays): a stop holds for
		// this cycle only.
		plan.StopAt(nil)
	}
	if in.Settings.LoadBalancingRR {
		for _, d := range plan.Decisions() {
			if d.Kind == core.DecideRun && len(d.Where) > 0 {
				if n := w.Node(d.Where[0].Node); n != nil && n.TimeShared {
					p.mu.Lock()
					p.lastRR = n.Name
					p.mu.Unlock()
				}
			}
		}
	}
	return plan
}

// timeless reports whether files make InputsAt say the same at every
// moment: every time is prime time without a holidays year, and without
// dedicated windows none is current or next.
func timeless(files *schedpriv.Files) bool {
	if files == nil {
		return true
	}
	return (files.Holidays == nil || files.Holidays.Year == 0) && (files.Dedicated == nil || len(files.Dedicated.Windows) == 0)
}

// usesFairShare reports whether either side of the clock orders jobs by
// fair share or preempts by it, or the job sort formula reads the
// fair-share standing.
func usesFairShare(files *schedpriv.Files) bool {
	if files == nil || files.Config == nil {
		return false
	}
	if f := files.Config.JobSortFormula; f != nil && f.UsesFairshare() {
		return true
	}
	for _, s := range []*schedpriv.Settings{&files.Config.Prime, &files.Config.NonPrime} {
		if s.PreemptiveSched && slices.ContainsFunc(files.Config.PreemptPrio, func(c schedpriv.PreemptClass) bool { return c&schedpriv.PreemptFairshare != 0 }) {
			return true // a preemption level reads who is over their share
		}
		if s.FairShare || s.SortBy == schedpriv.FairShareSort || slices.Contains(s.Keys, schedpriv.FairShareSort) {
			return true
		}
	}
	return false
}

// The scheduler toolkit keeps the fair-share usage on disk through these
// (sched.UsageKeeper).

// RestoreUsage starts counting from a saved state.
func (p *Policy) RestoreUsage(s *schedpriv.UsageState) {
	p.mu.Lock()
	p.ledger = fairshare.NewLedger(s)
	p.mu.Unlock()
}

// UsageState returns the usage to save (nil when fair share is not in
// use) and whether it changed since the last call.
func (p *Policy) UsageState() (*schedpriv.UsageState, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ledger == nil || !p.fairShare {
		return nil, false
	}
	return p.ledger.State()
}

// Usage is a copy of the fair-share usage of each entity, nil when fair
// share is not in use (sched.UsageReporter). Unlike UsageState it leaves
// the ledger's changed mark alone: it is read for display, not to save.
func (p *Policy) Usage() schedpriv.Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ledger == nil || !p.fairShare {
		return nil
	}
	return maps.Clone(p.ledger.Usage())
}

// Following lists the jobs whose cpu time is counted; those that ended
// are wanted in the next world's Ended.
func (p *Policy) Following() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ledger == nil || !p.fairShare {
		return nil
	}
	return p.ledger.Following()
}

// SyncEvery is sched_config's sync_time: how often usage is saved.
func (p *Policy) SyncEvery() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.files == nil || p.files.Config == nil {
		return 0
	}
	return p.files.Config.SyncTime
}

// InputsAt derives the settings in force at now: prime or non-prime time
// from the holidays file, and the current or next dedicated window.
func InputsAt(files *schedpriv.Files, now time.Time) Inputs {
	if files == nil || files.Config == nil {
		return Inputs{Settings: Settings{Backfill: true, BackfillDepth: schedpriv.DefaultBackfillDepth}}
	}
	cfg := files.Config
	prime := files.Holidays == nil || files.Holidays.IsPrime(now)
	a := cfg.Active(prime)
	st := Settings{
		ByQueue: a.ByQueue, StrictFIFO: a.StrictFIFO, RoundRobin: a.RoundRobin, SortQueues: a.SortQueues,
		HelpStarving: a.HelpStarvingJobs, MaxStarve: cfg.MaxStarve,
		DedicatedPrefix: cfg.DedicatedPrefix, IgnoreQueues: cfg.IgnoreQueues,
		ActivationFilters: cfg.ActivationFilters, FilterTimeout: cfg.FilterTimeout, DefaultHoldDuration: cfg.DefaultHoldDuration,
	}
	st.Backfill, st.BackfillDepth = backfillOf(cfg, a)
	st.FairShare = a.FairShare
	st.Formula = cfg.JobSortFormula
	st.LoadBalancing, st.LoadBalancingRR = a.LoadBalancing, a.LoadBalancingRR
	st.Balanced, st.PriorityBias = a.SchedulingMode == schedpriv.ModeBalanced, a.PriorityBias
	st.ShrinkImmediate, st.ShrinkGrace = a.Shrink == "immediate", a.ShrinkGrace
	if a.PreemptiveSched {
		st.Preempt = &Preemption{QueuePrio: int64(cfg.PreemptQueuePrio), Prio: cfg.PreemptPrio, Order: cfg.PreemptOrder}
	}
	keys := []schedpriv.SortKey{a.SortBy}
	if a.SortBy == schedpriv.MultiSort {
		keys = a.Keys
	}
	for _, k := range keys {
		spec, ok := k.Spec()
		if !ok {
			continue
		}
		switch spec.Source {
		case schedpriv.SourceResource:
			st.Sort = append(st.Sort, SortKey{Resource: spec.Resource, Descending: spec.Descending})
		case schedpriv.SourcePriority:
			st.Sort = append(st.Sort, SortKey{Priority: true, Descending: spec.Descending})
		case schedpriv.SourceFairShare:
			st.Sort = append(st.Sort, SortKey{FairShare: true, Descending: spec.Descending})
		}
	}
	for _, k := range a.JobSortKeys {
		st.Sort = append(st.Sort, SortKey{Resource: k.Resource, Descending: k.Descending})
	}
	in := Inputs{Settings: st}
	if files.Dedicated != nil {
		if w, ok := files.Dedicated.Current(now); ok {
			in.Dedicated = &Window{From: w.From, To: w.To}
		} else if w, ok := files.Dedicated.Next(now); ok {
			in.Dedicated = &Window{From: w.From, To: w.To}
		}
	}
	return in
}

// backfillOf reads backfill and backfill_depth for one side of the
// clock: a depth of 0 here means the whole queue.
func backfillOf(cfg *schedpriv.Config, a schedpriv.Settings) (bool, int) {
	depth := cfg.BackfillDepth
	if depth == schedpriv.BackfillDepthAll {
		depth = 0
	}
	return a.Backfill, depth
}
