package fifo

import (
	"sort"

	"github.com/gopbs/gopbs/sched/core"
)

// Load balancing (reference §2.9, the admin guide's step 8): with
// load_balancing, a one-chunk job goes to the least loaded time-shared
// node whose load with the job stays within its ideal load, else to the
// least loaded one within its max load; with load_balancing_rr, to the
// next time-shared node after the last one used whose load with the job
// stays below its max load. A node's load is its mom's loadave plus the
// cpus of the jobs this cycle started there. A node with no ideal or max
// load takes its cpu count (as the classic scheduler does). Jobs of
// several chunks, and clusters without time-shared nodes, are placed as
// usual. The classic rr counted the load twice and crashed when no node
// qualified; here the load counts once and the job waits with a comment.

const cTsLoaded = "All timesharing nodes are too loaded to run job"

// LoadBalance is the default Ranking: sched_config's load_balancing and
// load_balancing_rr over time-shared nodes; for other jobs, or with both
// off, it has no opinion (nil: the calendar's order). A site Ranking may
// ask it first and rank the rest itself.
type LoadBalance struct{}

func (LoadBalance) Name() string { return "load_balancing" }

func (LoadBalance) Rank(cx *Context, j *core.Job) ([]*core.Node, core.Status) {
	st := &cx.Settings // not a copy: this is asked of every job tried
	if !st.LoadBalancing && !st.LoadBalancingRR {
		return nil, core.OK
	}
	chunks := 0
	for _, c := range j.Select {
		chunks += c.Count
	}
	if chunks > 1 {
		return nil, core.OK
	}
	var ts []*core.Node
	for _, n := range cx.World.Nodes {
		if n.TimeShared {
			ts = append(ts, n)
		}
	}
	if len(ts) == 0 {
		return nil, core.OK
	}
	need := max(1, j.Totals["ncpus"])
	type cand struct {
		n    *core.Node
		load float64
		good bool
	}
	var cands []cand
	for _, n := range ts {
		if !n.Up() {
			continue
		}
		load := cx.loadOf(n)
		ideal, maxLoad := limits(n)
		switch {
		case st.LoadBalancingRR:
			if load+need < maxLoad {
				cands = append(cands, cand{n: n, load: load})
			}
		case load+need <= ideal:
			cands = append(cands, cand{n: n, load: load, good: true})
		case load+need <= maxLoad:
			cands = append(cands, cand{n: n, load: load})
		}
	}
	if len(cands) == 0 {
		return nil, core.NotNowf("load_balancing", "%s", cTsLoaded)
	}
	if st.LoadBalancingRR {
		// Round robin in name order, starting after the last node used.
		sort.Slice(cands, func(a, b int) bool { return cands[a].n.Name < cands[b].n.Name })
		first := 0
		for i, c := range cands {
			if c.n.Name > cx.lastRR {
				first = i
				break
			}
		}
		cands = append(cands[first:], cands[:first]...)
	} else {
		sort.SliceStable(cands, func(a, b int) bool {
			if cands[a].good != cands[b].good {
				return cands[a].good
			}
			if cands[a].load != cands[b].load {
				return cands[a].load < cands[b].load
			}
			return cands[a].n.Name < cands[b].n.Name
		})
	}
	out := make([]*core.Node, len(cands))
	for i, c := range cands {
		out[i] = c.n
	}
	return out, core.OK
}

// limits are a node's ideal and max load, its cpu count when unset.
func limits(n *core.Node) (ideal, maxLoad float64) {
	ideal, maxLoad = n.IdealLoad, n.MaxLoad
	if ideal < 0 {
		ideal = n.Avail["ncpus"]
	}
	if maxLoad < 0 {
		maxLoad = n.Avail["ncpus"]
	}
	return ideal, maxLoad
}

// loadOf is a node's load in this cycle.
func (cx *Context) loadOf(n *core.Node) float64 {
	if v, ok := cx.load[n.Name]; ok {
		return v
	}
	return n.Loadave
}

// started counts a job placed by the ranking in its node's load.
func (cx *Context) started(j *core.Job, where []core.Chunk) {
	if cx.load == nil {
		cx.load = map[string]float64{}
	}
	for _, c := range where {
		n := cx.World.Node(c.Node)
		if n == nil {
			continue
		}
		cx.load[c.Node] = cx.loadOf(n) + max(1, c.Amounts()["ncpus"])
		cx.lastRR = c.Node
	}
}
