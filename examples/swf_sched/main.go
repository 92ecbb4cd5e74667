// Command swf_sched is an example site scheduler built on the gopbs
// toolkit: shortest walltime first. Each cycle it tries the queued jobs of
// started execution queues in increasing Resource_List.walltime (jobs
// without one last, then in submission order) and starts each that fits
// on the free nodes. It replaces pbs_sched: run it instead, with the same
// pbs.conf.
//
// It shows the whole contract of a policy: read the snapshot, record
// decisions on the cycle, no I/O of its own.
package main

import (
	"sort"

	"github.com/hashicorp/go-hclog"

	"gopbs/sched"
	schedpriv "gopbs/sched_priv"
)

// shortestFirst is the policy.
type shortestFirst struct{}

// Configure accepts any sched_priv: this policy has no options.
func (shortestFirst) Configure(*schedpriv.Files, hclog.Logger) error { return nil }

// Schedule starts jobs in increasing walltime order while they fit.
func (shortestFirst) Schedule(c *sched.Cycle) {
	snap := c.Snapshot
	var jobs []*sched.Job
	for _, j := range snap.Jobs {
		q := snap.Queue(j.Queue)
		if j.Queued() && q != nil && q.Execution && q.Started {
			jobs = append(jobs, j)
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool {
		wa, wb := jobs[a].Walltime(), jobs[b].Walltime()
		switch {
		case wa < 0:
			return false
		case wb < 0:
			return true
		}
		return wa < wb
	})
	ledger := sched.NewLedger(snap)
	for _, j := range jobs {
		p, err := ledger.Place(j)
		if err != nil {
			c.Comment(j, "Not Running: waiting for nodes (shortest walltime first)")
			continue
		}
		c.Run(j, sched.NodesOf(p), "Job started by swf_sched")
		ledger.Start(j, p)
	}
}

func main() { sched.Main("swf_sched", shortestFirst{}) }
