// Command swf_sched is an example site scheduler built on the gopbs
// toolkit: shortest walltime first. Each cycle it tries the queued jobs of
// started execution queues in increasing walltime (jobs without one last,
// then in submission order) and starts each that fits on the free nodes.
// It replaces pbs_sched: run it instead, with the same pbs.conf.
//
// It shows the whole contract of a policy: read the typed world, return a
// plan, no I/O of its own (package sched/core).
package main

import (
	"sort"

	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/core"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// shortestFirst is the policy.
type shortestFirst struct{}

// Configure accepts any sched_priv: this policy has no options.
func (shortestFirst) Configure(*schedpriv.Files, core.Logger) error { return nil }

// Schedule starts jobs in increasing walltime order while they fit.
func (shortestFirst) Schedule(w *core.World, _ core.Event, _ core.Logger) *core.Plan {
	var jobs []*core.Job
	for _, j := range w.Jobs {
		if q := w.Queue(j.Queue); j.Queued() && q != nil && q.Execution && q.Started {
			jobs = append(jobs, j)
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool {
		wa, wb := jobs[a].Walltime, jobs[b].Walltime
		return wa > 0 && (wb <= 0 || wa < wb)
	})
	plan, cal := core.NewPlan(), core.NewCalendar(w)
	for _, j := range jobs {
		where, ok := cal.PlaceAt(j, w.Now, nil, false)
		if !ok {
			plan.Comment(j, "Not Running: waiting for nodes (shortest walltime first)")
			continue
		}
		plan.Run(j, where, "Job started by swf_sched")
		cal.Start(j, where)
	}
	return plan
}

func main() { sched.Main("swf_sched", shortestFirst{}) }
