package fifo

import (
	"sync"
	"time"

	"gopbs/sched/core"
	schedpriv "gopbs/sched_priv"
)

// Policy is the FIFO policy for a scheduler binary: it keeps the
// sched_priv files and, each cycle, derives the settings in force from
// them and runs the pipeline.
type Policy struct {
	Pipeline *Pipeline // nil: DefaultPipeline

	mu    sync.Mutex
	files *schedpriv.Files
}

// Configure takes new sched_priv files. Options the FIFO policy does not
// implement are accepted and named in the log.
func (p *Policy) Configure(files *schedpriv.Files, log core.Logger) error {
	for _, s := range []schedpriv.Settings{files.Config.Prime, files.Config.NonPrime} {
		switch {
		case s.FairShare || s.SortBy == schedpriv.FairShareSort:
			log.Warn("fair_share is not implemented by this policy: jobs keep their sort order")
		case s.LoadBalancing || s.LoadBalancingRR:
			log.Warn("load_balancing is not implemented by this policy: nodes are chosen first-fit")
		}
	}
	p.mu.Lock()
	p.files = files
	pl := p.Pipeline
	p.mu.Unlock()
	if len(files.Config.ActivationFilters) > 0 && (pl == nil || len(pl.Activations) == 0) {
		// A driver without the filter runner (the simulator) does not run
		// them: say so rather than schedule as if they had said yes.
		log.Warn("activation_filter lines are not run by this scheduler: jobs start without them")
	}
	return nil
}

// Schedule decides one cycle.
func (p *Policy) Schedule(w *core.World, _ core.Event, _ core.Logger) *core.Plan {
	p.mu.Lock()
	files := p.files
	pl := p.Pipeline
	p.mu.Unlock()
	if pl == nil {
		pl = DefaultPipeline()
	}
	return pl.Schedule(w, InputsAt(files, w.Now))
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
