package trace

import (
	"reflect"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	// j builds a job: id, submit, run, allocated procs, requested procs,
	// requested time.
	j := func(id, submit, run int64, procs, req int, reqTime int64) Job {
		return Job{ID: id, Submit: submit, Run: run, Procs: procs, ReqProcs: req, ReqTime: reqTime}
	}
	w := &Workload{MaxProcs: 8, Jobs: []Job{
		j(1, 50, 10, 4, 2, 100),  // requested procs win
		j(2, 10, 10, 3, -1, -1),  // allocated when none requested; walltime = run time
		j(3, 10, 200, 1, 1, 100), // ran longer than requested: walltime raised
		j(4, 5, -1, 1, 1, 100),   // no run time: dropped
		j(5, 5, 1, -1, -1, 100),  // no processor count: dropped
		j(6, 5, 1, 2, 9, 100),    // more than the machine (requested): dropped
		j(7, 5, 1, 9, 0, 100),    // more than the machine (allocated, request 0): dropped
		j(8, 10, 0, 8, 8, 0),     // a whole-machine job of run time 0: kept
		j(9, -1, 5, 1, 1, 10),    // unknown submit: dropped
		j(10, 0, 5, 1, 1, 5),
	}}
	if err := Normalize(w, 0); err != nil {
		t.Fatal(err)
	}
	want := []Job{
		j(10, 0, 5, 1, 1, 5),
		j(2, 10, 10, 3, -1, 10),
		j(3, 10, 200, 1, 1, 200),
		j(8, 10, 0, 8, 8, 0),
		j(1, 50, 10, 2, 2, 100),
	}
	if !reflect.DeepEqual(w.Jobs, want) {
		t.Errorf("jobs\n got %+v\nwant %+v", w.Jobs, want)
	}
	if w.Dropped != 5 || w.MaxProcs != 8 {
		t.Errorf("dropped %d, machine %d", w.Dropped, w.MaxProcs)
	}

	// The procs argument overrides MaxProcs, both ways.
	w = &Workload{MaxProcs: 8, Jobs: []Job{j(1, 0, 1, 9, 9, 1), j(2, 0, 1, 5, 5, 1)}}
	if err := Normalize(w, 4); err != nil || len(w.Jobs) != 0 || w.Dropped != 2 || w.MaxProcs != 4 {
		t.Errorf("procs 4: %v %d jobs %d dropped machine %d", err, len(w.Jobs), w.Dropped, w.MaxProcs)
	}
	w = &Workload{Jobs: []Job{j(1, 0, 1, 9, 9, 1)}}
	if err := Normalize(w, 16); err != nil || len(w.Jobs) != 1 || w.MaxProcs != 16 {
		t.Errorf("procs 16: %v %d jobs machine %d", err, len(w.Jobs), w.MaxProcs)
	}
	if err := Normalize(&Workload{}, 0); err == nil || !strings.Contains(err.Error(), "machine size unknown") {
		t.Errorf("no machine size: %v", err)
	}
}

// TestNormalizeStable: ties in submit time keep file order, also when the
// file is not sorted.
func TestNormalizeStable(t *testing.T) {
	t.Parallel()
	var jobs []Job
	for i := range 1000 {
		jobs = append(jobs, Job{ID: int64(i), Submit: int64(i*7919) % 10, Run: 1, Procs: 1})
	}
	w := &Workload{MaxProcs: 1, Jobs: jobs}
	if err := Normalize(w, 0); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(w.Jobs); i++ {
		a, b := w.Jobs[i-1], w.Jobs[i]
		if a.Submit > b.Submit || a.Submit == b.Submit && a.ID > b.ID {
			t.Fatalf("job %d before job %d", a.ID, b.ID)
		}
	}
}
