package main

import (
	"slices"

	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fifo"
)

// bestFit ranks the nodes that are up by the cpus a job would leave free
// on them, fewest first; nodes too small for the job's largest chunk go
// last (a multi-chunk job may still use them for smaller chunks). It asks
// the ranking it replaces first (then: load balancing), and keeps that
// ranking's answer when it has one.
type bestFit struct{ then fifo.Ranking }

func (bestFit) Name() string { return "best_fit" }

func (b bestFit) Rank(cx *fifo.Context, j *core.Job) ([]*core.Node, core.Status) {
	if b.then != nil {
		if order, st := b.then.Rank(cx, j); order != nil || st.Code != core.Run {
			return order, st
		}
	}
	need := 0.0
	for _, c := range j.Select {
		need = max(need, c.Amounts["ncpus"])
	}
	type cand struct {
		n    *core.Node
		left float64
	}
	var cands []cand
	for _, n := range cx.World.Nodes {
		if !n.Up() {
			continue
		}
		free := cx.Cal.FreeNow(n.Name)
		if free == nil {
			continue
		}
		left := free["ncpus"] - need
		if left < 0 {
			left = 1 << 30 // too small for the largest chunk: last
		}
		cands = append(cands, cand{n, left})
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		switch {
		case a.left < b.left:
			return -1
		case a.left > b.left:
			return 1
		}
		return 0
	})
	order := make([]*core.Node, len(cands))
	for i, c := range cands {
		order[i] = c.n
	}
	return order, core.OK
}
