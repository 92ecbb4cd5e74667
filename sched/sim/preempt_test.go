package sim

import (
	"testing"
	"time"

	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fifo"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// preemptReplay replays jobs on one 2-cpu machine with workq and an
// express queue (priority 200), preemption on with order, or off.
func preemptReplay(t *testing.T, order string, on bool, jobs []Job) map[string]Outcome {
	t.Helper()
	st := settings{}
	if on {
		o, err := schedpriv.ParsePreemptOrder(order)
		if err != nil {
			t.Fatal(err)
		}
		st.Preempt = &fifo.Preemption{QueuePrio: 150, Prio: schedpriv.DefaultPreemptPrio, Order: o}
	}
	queues := []*core.Queue{{Name: "workq", Execution: true, Enabled: true, Started: true, Limits: core.NoLimits},
		{Name: "express", Execution: true, Enabled: true, Started: true, Priority: 200, Limits: core.NoLimits}}
	outs, err := Replay(Config{Nodes: machine(2), Queues: queues, Policy: st, Origin: time.Unix(1_000_000_000, 0), Preempting: on}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Outcome{}
	for _, o := range outs {
		got[o.Job.ID] = o
	}
	return got
}

// Job 1 holds the machine from 0 for 100 s; express job 2 comes at 10 and
// runs 20 s. Without preemption it waits until 100; by suspension it
// starts at once and job 1 resumes at 30, ending at 120 (its 90 s left);
// by requeue job 1 runs again from the start at 30, ending at 130.
func TestReplayPreemption(t *testing.T) {
	t.Parallel()
	jobs := []Job{
		{ID: "1", Submit: 0, Run: 100, Procs: 2, Walltime: 200},
		{ID: "2", Submit: 10, Run: 20, Procs: 2, Walltime: 50, Queue: "express"},
	}
	type se struct{ start, end int64 }
	for _, tc := range []struct {
		name  string
		order string
		on    bool
		want  map[string]se
		pre   bool // job 1 preempted
	}{
		{"off", "", false, map[string]se{"1": {0, 100}, "2": {100, 120}}, false},
		{"suspend", "SCR", true, map[string]se{"1": {0, 120}, "2": {10, 30}}, true},
		{"requeue", "R", true, map[string]se{"1": {30, 130}, "2": {10, 30}}, true},
		{"checkpoint only: no action here, no preemption", "C", true, map[string]se{"1": {0, 100}, "2": {100, 120}}, false},
	} {
		got := preemptReplay(t, tc.order, tc.on, jobs)
		for id, w := range tc.want {
			if o := got[id]; o.Start != w.start || o.End != w.end {
				t.Errorf("%s: job %s ran %d-%d, want %d-%d", tc.name, id, o.Start, o.End, w.start, w.end)
			}
		}
		if got["1"].Preempted != tc.pre || got["2"].Preempted {
			t.Errorf("%s: preempted %v %v", tc.name, got["1"].Preempted, got["2"].Preempted)
		}
	}
	m := Measure([]Outcome{preemptReplay(t, "S", true, jobs)["1"]}, 2)
	if m.Preempted != 1 || m.AvgBSLD != 1.2 {
		t.Errorf("metrics of the suspended job: preempted %d, bsld %v (want 1, 120/100)", m.Preempted, m.AvgBSLD)
	}
}
