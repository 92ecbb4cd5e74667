package fifo

import (
	"slices"
	"testing"
	"time"

	"gopbs/resc"
	"gopbs/sched/core"
)

// TestElasticRunningOrdered: the running elastic jobs below their maximum,
// most important first, are the same whether the world promises its
// queued jobs come last (World.Ordered: the list stops at the first) or
// not (every job is looked at).
func TestElasticRunningOrdered(t *testing.T) {
	sel := func(s string) resc.Select {
		v, err := resc.ParseSelect(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	chunks := func(n int) []core.Chunk { return make([]core.Chunk, n) }
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	jobs := []*core.Job{
		{ID: "rigid", State: core.JobRunning, Select: sel("2:ncpus=1"), Where: chunks(2), Stime: at(0)},
		{ID: "late", State: core.JobRunning, Select: sel("1-4:ncpus=1"), Where: chunks(1), Stime: at(20)},
		{ID: "full", State: core.JobRunning, Select: sel("1-2:ncpus=1"), Where: chunks(2), Stime: at(0)},
		{ID: "early", State: core.JobRunning, Select: sel("1-4:ncpus=1"), Where: chunks(3), Stime: at(10)},
		{ID: "urgent", State: core.JobRunning, Select: sel("2-3:ncpus=1"), Where: chunks(2), Stime: at(30), Priority: 5},
		{ID: "queued", State: core.JobQueued, Select: sel("1-4:ncpus=1")},
		{ID: "queued2", State: core.JobQueued, Select: sel("1:ncpus=1")},
	}
	want := []string{"urgent", "early", "late"}
	for _, ordered := range []bool{false, true} {
		w := &core.World{Jobs: jobs, Ordered: ordered}
		var got []string
		for _, j := range elasticRunning(w) {
			got = append(got, j.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("ordered %v: %v, want %v", ordered, got, want)
		}
	}
}
