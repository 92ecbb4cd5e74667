package fairshare

import (
	"strconv"
	"testing"
	"time"

	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched/core"
)

// With fairshare_usage_res ncpus*walltime a job is charged the cpus it
// holds over time, allocation by allocation: an elastic job that grows is
// charged more from the growth on; with cput, the cpu time it used.
func TestLedgerChargesHeldAllocations(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_000_000, 0)
	chunk := func(node string, cpus int) core.Chunk {
		return core.Chunk{Node: node, Chunk: resc.NewChunk(1, []resc.Pair{{Name: "ncpus", Value: strconv.Itoa(cpus)}})}
	}
	job := &core.Job{ID: "1.srv", Owner: "alice", State: core.JobRunning, Stime: t0, Where: []core.Chunk{chunk("n1", 1)}}
	tests := []struct {
		held bool
		want float64
	}{
		// 100 s at 1 cpu, 100 s at 3 cpus, then it ends 50 s later at 3.
		{true, 100*1 + 100*3 + 50*3},
		// cput: what it reports having used (70 s).
		{false, 70},
	}
	for _, tt := range tests {
		l := NewLedger(nil)
		l.SetHeld(tt.held)
		j := *job
		j.Where = []core.Chunk{chunk("n1", 1)}
		j.UsedCPU = 20 * time.Second
		l.Observe(&core.World{Now: t0.Add(100 * time.Second), Jobs: []*core.Job{&j}})
		j.Where = []core.Chunk{chunk("n1", 1), chunk("n2", 1), chunk("n3", 1)}
		j.UsedCPU = 50 * time.Second
		l.Observe(&core.World{Now: t0.Add(200 * time.Second), Jobs: []*core.Job{&j}})
		j.State, j.UsedWall, j.UsedCPU = core.JobFinished, 250*time.Second, 70*time.Second
		l.Observe(&core.World{Now: t0.Add(400 * time.Second), Ended: []*core.Job{&j}})
		if got := l.Usage()["alice"]; got != tt.want {
			t.Errorf("held=%v: charged %v, want %v", tt.held, got, tt.want)
		}
	}
}
