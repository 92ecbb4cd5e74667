package fairshare

import (
	"maps"
	"math"
	"time"

	"github.com/gopbs/gopbs/sched/core"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// Ledger counts usage: the cpu seconds of each user's jobs, used (cput)
// or held (the cpus of each allocation times its time; SetHeld).
type Ledger struct {
	s       *schedpriv.UsageState
	changed bool
	// held charges allocations; seen is when each followed job was last
	// observed (not saved: after a restart the first observation starts
	// the count afresh, so the gap is never charged twice).
	held bool
	seen map[string]time.Time
}

// SetHeld has the ledger charge the cpus jobs hold over time
// (fairshare_usage_res: ncpus*walltime) rather than the cpu time they
// used.
func (l *Ledger) SetHeld(held bool) { l.held = held }

// NewLedger starts from a saved state (nil: empty). The ledger keeps s.
func NewLedger(s *schedpriv.UsageState) *Ledger {
	if s == nil {
		s = schedpriv.NewUsageState()
	}
	if s.Entities == nil {
		s.Entities = schedpriv.Usage{}
	}
	if s.Jobs == nil {
		s.Jobs = map[string]float64{}
	}
	return &Ledger{s: s}
}

// Usage is the usage of each user (read only).
func (l *Ledger) Usage() schedpriv.Usage { return l.s.Entities }

// State returns a copy of the state to save, and whether it changed
// since the last call.
func (l *Ledger) State() (*schedpriv.UsageState, bool) {
	changed := l.changed
	l.changed = false
	return &schedpriv.UsageState{Entities: maps.Clone(l.s.Entities), Jobs: maps.Clone(l.s.Jobs), LastDecay: l.s.LastDecay}, changed
}

// Following lists the jobs whose cpu time is being counted: when one is
// missing from a world (it ended), the caller looks it up among finished
// jobs and passes it in World.Ended, so its last seconds count.
func (l *Ledger) Following() []string {
	out := make([]string, 0, len(l.s.Jobs))
	for id := range l.s.Jobs {
		out = append(out, id)
	}
	return out
}

// Observe counts what the world's jobs consumed since they were last
// seen: running jobs and those in w.Ended. A followed job that is in
// neither (gone from the server altogether) stops being followed.
func (l *Ledger) Observe(w *core.World) {
	seen := make(map[string]bool, len(l.s.Jobs))
	if l.seen == nil {
		l.seen = map[string]time.Time{}
	}
	count := func(j *core.Job) {
		cur := j.UsedCPU.Seconds()
		counted, followed := l.s.Jobs[j.ID]
		if l.held {
			cur = l.heldSoFar(j, counted, followed, w.Now)
		}
		if cur != counted || !followed {
			l.changed = true
		}
		if cur < counted {
			counted = 0 // a new run of a requeued job: its usage starts again
		}
		if cur > counted {
			l.s.Entities[entity(j)] += cur - counted
		}
		l.s.Jobs[j.ID] = cur
		seen[j.ID] = true
	}
	for _, j := range w.Jobs {
		if j.Running() {
			count(j)
		}
	}
	for _, j := range w.Ended {
		if _, followed := l.s.Jobs[j.ID]; followed {
			count(j)
			delete(l.s.Jobs, j.ID)
			delete(l.seen, j.ID)
			delete(seen, j.ID)
			l.changed = true
		}
	}
	// Followed jobs neither running nor ended were requeued (a new run
	// counts from zero) or are gone from the server.
	for id := range l.s.Jobs {
		if !seen[id] {
			delete(l.s.Jobs, id)
			l.changed = true
		}
	}
}

// heldSoFar is what a job held, in cpu seconds, up to now (an ended job:
// up to its end): what was counted before, and its cpus now times the
// time since it was last seen (since its start, when first seen).
func (l *Ledger) heldSoFar(j *core.Job, counted float64, followed bool, now time.Time) float64 {
	from, ok := l.seen[j.ID]
	switch {
	case !followed && !j.Stime.IsZero():
		from, counted = j.Stime, 0
	case !ok:
		from = now // after a restart: the gap is not known
	}
	to := now
	if j.State == core.JobFinished && j.UsedWall > 0 && !j.Stime.IsZero() {
		to = j.Stime.Add(j.UsedWall)
	}
	l.seen[j.ID] = to
	cpus := 0.0
	for _, c := range j.Where {
		cpus += c.Chunk.Amounts["ncpus"]
	}
	if from.Before(to) {
		counted += cpus * to.Sub(from).Seconds()
	}
	return counted
}

// entity is whom a job's usage is charged to: its owner (euser), as in
// the classic scheduler.
func entity(j *core.Job) string { return j.Owner }

// Decay multiplies every usage by factor once per whole interval since
// the last decay (half_life: factor 0.5). The first call only starts the
// clock. A non-positive interval, or a factor outside (0,1), never decays.
func (l *Ledger) Decay(now time.Time, interval time.Duration, factor float64) {
	step := int64(interval / time.Second)
	if step <= 0 || factor <= 0 || factor >= 1 {
		return
	}
	if l.s.LastDecay == 0 {
		l.s.LastDecay = now.Unix()
		l.changed = true
		return
	}
	periods := (now.Unix() - l.s.LastDecay) / step
	if periods <= 0 {
		return
	}
	f := math.Pow(factor, float64(periods))
	for name, v := range l.s.Entities {
		l.s.Entities[name] = v * f
	}
	l.s.LastDecay += periods * step
	l.changed = true
}

// Set sets one entity's usage (pbsfs -s).
func (l *Ledger) Set(name string, v float64) {
	l.s.Entities[name] = v
	l.changed = true
}
