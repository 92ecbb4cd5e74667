package starts

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/internal/server/state/statetest"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// view is a View over real state tables with nodes n1 and n2 of 4 cpus
// reported by their moms, n3 known but never reported, and a running job
// holding 3 cpus of n1.
func view(t *testing.T) View {
	t.Helper()
	tb := statetest.New(100)
	v := View{Jobs: tb.Jobs, Nodes: tb.Nodes, Table: tb.Table}
	for _, n := range []string{"n1", "n2", "n3"} {
		v.Nodes.Put(model.NewNode(n, n, "15002", n))
	}
	for _, n := range []string{"n1", "n2"} {
		v.Nodes.Report(n, proto.MomStatus{Node: n, Ncpus: 4, IdealLoad: -1, MaxLoad: -1})
	}
	busy := queued(9, "select", "1:ncpus=3")
	busy.Start(model.SubRunning, 50)
	busy.Alloc = resc.ParseAlloc("n1/0*3", "(n1:ncpus=3)")
	v.Jobs.Insert(busy)
	return v
}

func queued(seq int64, rl ...string) *model.Job {
	j := &model.Job{Seq: seq, ID: "j", Owner: "u@h", Queue: "workq", QueueType: "Execution", State: model.StateQueued}
	for i := 0; i+1 < len(rl); i += 2 {
		j.ResourceList = j.ResourceList.Set(rl[i], rl[i+1])
	}
	j.CacheRequest(nil)
	return j
}

var noResv Allows = func(*model.Job, []*place.Node, int64) error { return nil }

// Every refusal of a start, in its code and words, and what a start that
// holds gives the job.
func TestPlan(t *testing.T) {
	t.Parallel()
	v := view(t)
	running := queued(1, "select", "1:ncpus=1")
	running.Start(model.SubRunning, 60)
	routed := queued(2, "select", "1:ncpus=1")
	routed.QueueType = "Route"
	for _, tc := range []struct {
		name   string
		job    *model.Job
		run    proto.RunSpec
		allows Allows
		code   proto.Code
		text   string
	}{
		{"running already", running, proto.RunSpec{Nodes: "n2"}, noResv, proto.PBSE_BADSTATE, "job is R"},
		{"in a route queue", routed, proto.RunSpec{Nodes: "n2"}, noResv, proto.PBSE_BADSTATE, "route queue"},
		{"no select", queued(3), proto.RunSpec{Nodes: "n2"}, noResv, proto.PBSE_BADATVAL, "no select"},
		{"more chunks named", queued(3, "select", "1:ncpus=1"), proto.RunSpec{Where: []string{"n1", "n2"}}, noResv, proto.PBSE_BADATVAL, "names 2 nodes for the 1 chunks"},
		{"amounts not the job's", queued(3, "select", "1:ncpus=1"), proto.RunSpec{Nodes: "(n2:ncpus=2)"}, noResv, proto.PBSE_BADATVAL, "does not match"},
		{"more chunks than the select", queued(3, "select", "1:ncpus=1"), proto.RunSpec{Nodes: "(n2:ncpus=1)+(n1:ncpus=1)"}, noResv, proto.PBSE_BADATVAL, "more chunks"},
		{"not room on n1", queued(3, "select", "1:ncpus=2"), proto.RunSpec{Nodes: "n1"}, noResv, proto.PBSE_RESCUNAV, ""},
		{"a node never reported", queued(3, "select", "1:ncpus=1"), proto.RunSpec{Nodes: "n3"}, noResv, proto.PBSE_RESCUNAV, ""},
		{"excl on a busy node", queued(3, "select", "1:ncpus=1", "place", "excl"), proto.RunSpec{Nodes: "n1"}, noResv, proto.PBSE_RESCUNAV, ""},
		{"a reservation refuses", queued(3, "select", "1:ncpus=1"), proto.RunSpec{Nodes: "n2"},
			func(*model.Job, []*place.Node, int64) error { return proto.Errorf(proto.PBSE_RESVAUTH_U, "(held)") }, proto.PBSE_RESVAUTH_U, "held"},
		{"an elastic job's count out of range", queued(3, "select", "1-2:ncpus=1"), proto.RunSpec{Where: []string{"n1", "n2", "n2"}}, noResv, proto.PBSE_BADATVAL, "1 to 2 chunks"},
		{"a walltime for a job that has one", queued(3, "select", "1:ncpus=1", "walltime", "60"), proto.RunSpec{Nodes: "n2", Walltime: 30}, noResv, proto.PBSE_BADATVAL, "shrink-to-fit"},
	} {
		_, err := v.Plan(tc.job, tc.run, tc.allows, 100)
		var pe *proto.Error
		if !errors.As(err, &pe) || pe.Code != tc.code || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v, want code %d with %q", tc.name, err, tc.code, tc.text)
		}
	}

	// A scheduler's exact placement of two chunks, one on what n1 has left.
	j := queued(4, "select", "1:ncpus=1:mpiprocs=2+1:ncpus=4")
	p, err := v.Plan(j, proto.RunSpec{Nodes: "(n1:ncpus=1)+(n2:ncpus=4)"}, noResv, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Alloc.ExecVnode(); got != "(n1:ncpus=1)+(n2:ncpus=4)" || p.Alloc.ExecHost() != "n1/0+n2/0*4" {
		t.Errorf("allocation %q %q", got, p.Alloc.ExecHost())
	}
	if strings.Join(p.Nodefile, ",") != "n1,n1,n2" || len(p.Chunks) != 2 || p.Walltime != "" || p.StagedIn {
		t.Errorf("plan %+v", p)
	}
	// An elastic job starts with as many chunks as the placement names.
	p, err = v.Plan(queued(5, "select", "1-3:ncpus=1"), proto.RunSpec{Where: []string{"n1", "n2"}}, noResv, 100)
	if err != nil || len(p.Alloc) != 2 {
		t.Errorf("elastic start on two nodes: %+v, %v", p.Alloc, err)
	}
	// A shrink-to-fit job gets the walltime chosen; staged in on n2, it
	// is not copied again there.
	stf := queued(6, "select", "1:ncpus=1", "min_walltime", "00:10:00", "max_walltime", "01:00:00")
	stf.StagePhase, stf.StageNode = model.StageDone, "n2"
	p, err = v.Plan(stf, proto.RunSpec{Nodes: "n2", Walltime: 1800}, noResv, 100)
	if err != nil || p.Walltime != "00:30:00" || !p.StagedIn {
		t.Errorf("shrink-to-fit start: walltime %q staged %v, %v", p.Walltime, p.StagedIn, err)
	}
}

// What Free tells a placement: only nodes up, what jobs use taken off,
// and for exclusive placement which nodes and hosts run nothing.
func TestFree(t *testing.T) {
	t.Parallel()
	v := view(t)
	free := v.Free(nil, true)
	if len(free) != 2 || free[0].Name != "n1" || free[1].Name != "n2" {
		t.Fatalf("free nodes %+v", free)
	}
	if free[0].Free[proto.ResNcpus] != 1 || free[0].Idle || free[0].HostIdle || free[1].Free[proto.ResNcpus] != 4 || !free[1].Idle || !free[1].HostIdle {
		t.Errorf("n1 %+v, n2 %+v", free[0], free[1])
	}
	if named := v.Free([]string{"n2", "n2", "n3"}, false); len(named) != 1 || named[0].Name != "n2" || named[0].HostIdle {
		t.Errorf("named n2 twice and n3: %+v", named)
	}
}

// A preempted job resumes on its own chunks only when each fits beside
// what the other jobs hold now, alone on its nodes when it was placed
// exclusively.
func TestResumable(t *testing.T) {
	t.Parallel()
	v := view(t) // n1: 1 cpu free of 4, n2: 4 free, n3 never reported
	susp := func(vnode, placement string) *model.Job {
		j := queued(20, "select", "1:ncpus=1", "place", placement)
		j.Alloc = resc.ParseAlloc("", vnode)
		j.CacheRequest(nil)
		return j
	}
	for _, tc := range []struct {
		name, vnode, place string
		text               string
	}{
		{"fits beside the running job", "(n1:ncpus=1)+(n2:ncpus=4)", "free", ""},
		{"more cpus than n1 has left", "(n1:ncpus=2)", "free", "node n1 has 1 of ncpus free; the job needs 2"},
		{"two chunks on n1 add up", "(n1:ncpus=1)+(n1:ncpus=1)", "free", "needs 2"},
		{"a node not up", "(n3:ncpus=1)", "free", "node n3 is not up"},
		{"exclusive beside a job", "(n1:ncpus=1)", "excl", "not free of other jobs"},
		{"exclusive alone", "(n2:ncpus=1)", "excl", ""},
	} {
		err := v.Resumable(susp(tc.vnode, tc.place))
		if tc.text == "" && err != nil || tc.text != "" && (err == nil || !strings.Contains(err.Error(), tc.text)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.text)
		}
	}
}
