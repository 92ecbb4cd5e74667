package nodes

import (
	"slices"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// A mom's report against the job table: what it runs that the server
// does not (killed), what both run (taken in), an allocation the mom did
// not bring to the store's (resynced unless a resize is under way), and
// what the server runs there that the mom has forgotten (lost, after the
// grace of a fresh start).
func TestReconcile(t *testing.T) {
	t.Parallel()
	v := view(t)
	job := func(seq int64, host, vnode string, stime int64, runs int) *model.Job {
		j := running(seq, "", "free")
		j.Alloc, j.Stime, j.RunCount = resc.ParseAlloc(host, vnode), stime, runs
		v.Jobs.Insert(j)
		return j
	}
	agreed := job(1, "n1/0", "(n1:ncpus=1)", 10, 1)
	moved := job(2, "n1/0*2", "(n1:ncpus=2)", 10, 1)        // mom holds another allocation
	job(3, "n1/0*2", "(n1:ncpus=2)", 10, 1)                 // the same, but being resized
	forgotten := job(4, "n1/0", "(n1:ncpus=1)", 10, 1)      // the mom does not report it
	job(5, "n1/0", "(n1:ncpus=1)", 95, 1)                   // nor this one, started just now
	job(6, "n2/0+n1/0", "(n2:ncpus=1)+(n1:ncpus=1)", 10, 1) // n1 is its sister
	job(7, "n1/0", "(n1:ncpus=1)", 10, 2)                   // reported from its run before
	job(10, "n2/0", "(n2:ncpus=1)", 10, 1)                  // n1 has no part of it
	st := &proto.MomStatus{Node: "n1",
		Jobs: []proto.MomJobState{
			{JobID: "1.srv", RunCount: 1, ExecVnode: "(n1:ncpus=1)", SessionID: 42},
			{JobID: "2.srv", RunCount: 1, ExecVnode: "(n1:ncpus=1)"},
			{JobID: "3.srv", RunCount: 1, ExecVnode: "(n1:ncpus=1)"},
			{JobID: "7.srv", RunCount: 1},
			{JobID: "8.srv", RunCount: 1},               // unknown to the server
			{JobID: "9.srv", RunCount: 1, Exited: true}, // unknown, but ended already
		},
		Sisters: []proto.MomJobState{{JobID: "6.srv", RunCount: 1}, {JobID: "10.srv", RunCount: 1}},
	}
	got := v.Reconcile(st, time.Unix(100, 0), 30*time.Second, func(k model.JobKey) bool { return k.Seq == 3 })
	if want := []string{"7.srv", "8.srv", "10.srv"}; !slices.Equal(got.Kill, want) {
		t.Errorf("killed %v, want %v", got.Kill, want)
	}
	var running []string
	for _, r := range got.Running {
		running = append(running, r.Job.ID)
	}
	if want := []string{"1.srv", "2.srv", "3.srv"}; !slices.Equal(running, want) || got.Running[0].Job != agreed || got.Running[0].Report.SessionID != 42 {
		t.Errorf("running %v, want %v with their reports", running, want)
	}
	if want := []model.JobKey{moved.Key()}; !slices.Equal(got.Resync, want) {
		t.Errorf("resynced %v, want %v", got.Resync, want)
	}
	if want := []model.JobKey{forgotten.Key()}; !slices.Equal(got.Lost, want) {
		t.Errorf("lost %v, want %v", got.Lost, want)
	}
	if agreed.SessionID != 0 {
		t.Error("Reconcile changed a job")
	}
}
