package sim

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fifo"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// settings is a core.Policy running the FIFO pipeline with fixed settings.
type settings fifo.Settings

func (s settings) Configure(*schedpriv.Files, core.Logger) error { return nil }
func (s settings) Schedule(w *core.World, _ core.Event, _ core.Logger) *core.Plan {
	return defaultPipeline.Schedule(w, fifo.Inputs{Settings: fifo.Settings(s)})
}

// defaultPipeline is made once, as pbs_sched's policy holds its pipeline
// (a pipeline keeps no state of its own).
var defaultPipeline = fifo.DefaultPipeline()

func machine(procs int) []*core.Node {
	return []*core.Node{{Name: "m", Avail: core.Amounts{"ncpus": float64(procs)}, Props: map[string]string{}, Assigned: core.Amounts{}, IdealLoad: -1, MaxLoad: -1}}
}

func starts(t *testing.T, pol core.Policy, jobs []Job) []int64 {
	t.Helper()
	outs, err := Replay(Config{Nodes: machine(4), Policy: pol, Origin: time.Unix(1_000_000_000, 0)}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int64, len(outs))
	for i, o := range outs {
		got[i] = o.Start
	}
	return got
}

// A trace worked by hand on a machine of 4 processors: every start time
// is checked exactly for FCFS, plain FIFO and EASY. Job 1 ends early
// (60 s of its 100 s walltime); job 3 backfills under EASY; job 4 would
// delay the reservation and does not; job 5 has no walltime and is never
// backfilled.
func TestHandWorkedTrace(t *testing.T) {
	t.Parallel()
	jobs := []Job{
		{ID: "1", Submit: 0, Run: 60, Procs: 2, Walltime: 100},
		{ID: "2", Submit: 0, Run: 50, Procs: 4, Walltime: 100},
		{ID: "3", Submit: 0, Run: 30, Procs: 2, Walltime: 40},
		{ID: "4", Submit: 10, Run: 200, Procs: 2, Walltime: 300},
		{ID: "5", Submit: 20, Run: 10, Procs: 1},
	}
	for _, tc := range []struct {
		name string
		pol  settings
		want []int64
	}{
		{"FCFS (strict fifo)", settings{StrictFIFO: true}, []int64{0, 60, 110, 110, 140}},
		{"plain FIFO (first fit: the wide job starves)", settings{}, []int64{0, 230, 0, 30, 60}},
		{"EASY (strict fifo + backfill)", settings{StrictFIFO: true, Backfill: true, BackfillDepth: 1000}, []int64{0, 60, 0, 110, 110}},
	} {
		if got := starts(t, tc.pol, jobs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: starts %v, want %v", tc.name, got, tc.want)
		}
	}
}

// EASY's second case: a job that fits beside the reservation (using only
// the extra processors) starts although it ends after the shadow time.
func TestEASYExtraProcessors(t *testing.T) {
	t.Parallel()
	jobs := []Job{
		{ID: "1", Submit: 0, Run: 100, Procs: 3, Walltime: 100},
		{ID: "2", Submit: 0, Run: 10, Procs: 3, Walltime: 10},   // head: waits for job 1
		{ID: "3", Submit: 0, Run: 500, Procs: 1, Walltime: 500}, // 1 extra processor at the shadow time
		{ID: "4", Submit: 0, Run: 500, Procs: 1, Walltime: 500}, // none left
	}
	got := starts(t, settings{StrictFIFO: true, Backfill: true, BackfillDepth: 1000}, jobs)
	if want := []int64{0, 100, 0, 110}; !reflect.DeepEqual(got, want) {
		t.Fatalf("starts %v, want %v", got, want)
	}
}

func TestMeasure(t *testing.T) {
	t.Parallel()
	jobs := []Job{{ID: "1", Submit: 0, Run: 5, Procs: 2, User: "a"}, {ID: "2", Submit: 0, Run: 100, Procs: 2, User: "b"}}
	outs := []Outcome{{Job: &jobs[0], Start: 10, End: 15}, {Job: &jobs[1], Start: 0, End: 100}}
	m := Measure(outs, 4)
	if m.Jobs != 2 || m.AvgWait != 5 || m.Makespan != 100 {
		t.Fatalf("metrics %+v", m)
	}
	// bsld: job 1 (10+5)/10 = 1.5, job 2: 1.
	if m.AvgBSLD != 1.25 {
		t.Fatalf("avg bsld %v", m.AvgBSLD)
	}
	if want := (5.0*2 + 100*2) / (4 * 100.0); m.Utilization != want {
		t.Fatalf("utilization %v, want %v", m.Utilization, want)
	}
	if want := 2.5 * 2.5 / (2 * (1.5*1.5 + 1)); m.Fairness != want {
		t.Fatalf("fairness %v, want %v", m.Fairness, want)
	}
}

// TestRunningOrder: running jobs stay in Seq order, jobs of one Seq in
// start order, and the one that ends is the one removed.
func TestRunningOrder(t *testing.T) {
	t.Parallel()
	a, b, c, d := &core.Job{Seq: 5}, &core.Job{Seq: 2}, &core.Job{Seq: 5}, &core.Job{Seq: 9}
	var r []*core.Job
	for _, j := range []*core.Job{a, b, c, d} {
		r, _ = addRunning(r, j)
	}
	// slices.Equal compares the pointers: the same jobs, not equal ones.
	if !slices.Equal(r, []*core.Job{b, a, c, d}) {
		t.Fatalf("order %v", r)
	}
	r, at := removeRunning(r, c)
	if at != 2 {
		t.Errorf("c was at %d, want 2", at)
	}
	r, at = removeRunning(r, &core.Job{Seq: 5}) // not running: nothing removed
	if at != -1 {
		t.Errorf("a job not running was at %d", at)
	}
	if !slices.Equal(r, []*core.Job{b, a, d}) {
		t.Fatalf("after removing: %v", r)
	}
}

// coreJob gives a trace job the numbers of its request: its cpus (one at
// least) and its walltime in seconds when it has one, and the totals of
// its select (its own when it parses, else one chunk of its cpus); the
// same, through the numbers a replay shares between jobs, for jobs asking
// for as much as an earlier one, and past as many requests as it keeps.
func TestCoreJobNumbers(t *testing.T) {
	t.Parallel()
	chunks := map[shape]selected{}
	cases := []struct {
		j       Job
		numbers core.Amounts
		ncpus   float64
	}{
		{Job{ID: "1", Procs: 4, Walltime: 3600}, core.Amounts{"ncpus": 4, "walltime": 3600}, 4},
		{Job{ID: "2", Procs: 1}, core.Amounts{"ncpus": 1}, 1},
		{Job{ID: "3", Procs: 0, Walltime: 100*3600 + 61}, core.Amounts{"ncpus": 1, "walltime": 100*3600 + 61}, 1},
		{Job{ID: "4", Procs: 12, Walltime: 59, Select: "2:ncpus=6:mem=1gb"}, core.Amounts{"ncpus": 12, "walltime": 59}, 12},
		{Job{ID: "5", Procs: 4, Walltime: 1, Select: "not a select"}, core.Amounts{"ncpus": 4, "walltime": 1}, 4},
		{Job{ID: "6", Procs: 1, Walltime: -5}, core.Amounts{"ncpus": 1}, 1},
	}
	shared := map[requested]core.Amounts{}
	for i := range maxNumbers - 3 {
		numbersOf(shared, &Job{Procs: 1000 + i}) // fill it close to its bound
	}
	for _, numbers := range []map[requested]core.Amounts{nil, shared, shared} {
		for _, tc := range cases {
			c := coreJob(&tc.j, time.Unix(0, 0), false, chunks, numbers, nil)
			if !reflect.DeepEqual(c.Numbers, tc.numbers) || c.Totals["ncpus"] != tc.ncpus {
				t.Errorf("job %s: numbers %v totals %v, want %v and %v cpus", tc.j.ID, c.Numbers, c.Totals, tc.numbers, tc.ncpus)
			}
		}
	}
	if len(shared) > maxNumbers {
		t.Errorf("%d requests kept, at most %d wanted", len(shared), maxNumbers)
	}
}
