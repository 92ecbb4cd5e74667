package state

import (
	"slices"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
)

// The index of who waits for whom follows every change of a job: a new
// job's after forms, a form met, a job that ends or leaves, a subjob
// (never in it), and a load from the store.
func TestDependants(t *testing.T) {
	t.Parallel()
	now := int64(1)
	tab := table(t, &now, nil, nil)
	waits := func(seq int64, on ...int64) *model.Job {
		j := job(seq, "alice", "workq", model.StateHeld)
		dep := model.Dependency{Type: model.DepAfterOK}
		for _, p := range on {
			dep.Jobs = append(dep.Jobs, model.DepJob{Seq: p})
		}
		j.Depends = model.Depends{dep}
		return j
	}
	tab.Insert(job(1, "alice", "workq", model.StateQueued))
	tab.Insert(job(2, "alice", "workq", model.StateQueued))
	three, four := waits(3, 1, 2), waits(4, 1)
	tab.Insert(three)
	tab.Insert(four)
	sub := waits(5, 1)
	sub.IsSubjob, sub.Index = true, 1
	tab.Insert(sub)
	check := func(when string, seq int64, want ...int64) {
		t.Helper()
		if got := tab.Dependants(seq); !slices.Equal(got, want) {
			t.Errorf("%s: dependants of %d %v, want %v", when, seq, got, want)
		}
	}
	check("inserted", 1, 3, 4)
	check("inserted", 2, 3)
	// Job 3's form on 1 met: it waits for 2 alone.
	tab.Update(three, func() { three.Depends[0].Jobs[0].Met = true })
	check("3's form on 1 met", 1, 4)
	check("3's form on 1 met", 2, 3)
	// Job 4 ends: it waits no more.
	tab.Update(four, func() { four.End(model.SubTerminated, 0, "deleted", now) })
	check("4 ended", 1)
	// Job 3 leaves the table.
	tab.Remove(three)
	check("3 removed", 2)
	// A load rebuilds it from the jobs.
	tab.Load([]*model.Job{job(1, "alice", "workq", model.StateQueued), waits(6, 1), waits(7, 1)}, nil, nil)
	check("loaded", 1, 6, 7)
}
