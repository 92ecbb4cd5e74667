package resvs

import (
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/internal/server/state/statetest"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// view is a View over real state tables with nodes n1 and n2 of 8 cpus
// each, and reservation R1 running on 4 cpus of n1 from 100 to 200.
func view(t *testing.T) (View, *model.Resv) {
	t.Helper()
	tb := statetest.New(1)
	v := View{Resvs: tb.Resvs, Nodes: tb.Nodes, Jobs: tb.Jobs, Table: tb.Table, ServerName: "srv"}
	for _, n := range []string{"n1", "n2"} {
		v.Nodes.Put(model.NewNode(n, n, "15002", n))
		v.Nodes.Report(n, proto.MomStatus{Node: n, Ncpus: 8, IdealLoad: -1, MaxLoad: -1})
	}
	r := &model.Resv{Seq: 1, Kind: model.ResvAdvance, State: proto.ResvRunning, Duration: 100, Count: 1,
		Occ: []model.ResvOcc{{Start: 100, Nodes: "(n1:ncpus=4)"}}}
	v.Resvs.Insert(r)
	return v, r
}

// free are candidates n1 and n2 with all 8 cpus free.
func free() []*place.Node {
	return []*place.Node{
		{Name: "n1", Free: map[string]float64{proto.ResNcpus: 8}, Idle: true},
		{Name: "n2", Free: map[string]float64{proto.ResNcpus: 8}, Idle: true},
	}
}

func job(seq int64, queue string, st model.JobState, ev string) *model.Job {
	return &model.Job{Seq: seq, ID: "j", Owner: "u@h", Queue: queue, State: st, Alloc: resc.ParseAlloc("", ev)}
}

func TestHolds(t *testing.T) {
	t.Parallel()
	v, r := view(t)
	if got := v.Holds(150)["n1"][proto.ResNcpus]; got != 4 {
		t.Errorf("in its window R1 holds %v cpus of n1, want 4", got)
	}
	for _, at := range []int64{99, 200} {
		if h := v.Holds(at); h != nil {
			t.Errorf("at %d (outside its window) it holds %v", at, h)
		}
	}
	// What its own jobs use is no longer held for them.
	v.Jobs.Insert(job(1, "R1", model.StateRunning, "(n1:ncpus=3)"))
	if got := v.Holds(150)["n1"][proto.ResNcpus]; got != 1 {
		t.Errorf("with 3 cpus used by its job R1 holds %v, want 1", got)
	}
	// Placed exclusively, it holds the whole node.
	r.Place = resc.Place{Arrangement: resc.ArrangeScatter, Sharing: resc.SharingExcl} // not only at the front of its text
	if got := v.Holds(150)["n1"][proto.ResNcpus]; got != 5 {
		t.Errorf("exclusive: %v cpus held (8 less its job's 3), want 5", got)
	}
}

func TestAllows(t *testing.T) {
	t.Parallel()
	v, _ := view(t)
	// A job outside the reservation gets what it leaves of n1.
	c := free()
	if err := v.Allows(job(2, "workq", model.StateQueued, ""), c, 150); err != nil {
		t.Fatal(err)
	}
	if c[0].Free[proto.ResNcpus] != 4 || c[0].Idle || c[1].Free[proto.ResNcpus] != 8 || !c[1].Idle {
		t.Errorf("outside: n1 %v (idle %v), n2 %v (idle %v)", c[0].Free, c[0].Idle, c[1].Free, c[1].Idle)
	}
	// A job of the reservation only what it reserved, on its nodes.
	v.Jobs.Insert(job(1, "R1", model.StateRunning, "(n1:ncpus=1)"))
	c = free()
	if err := v.Allows(job(3, "R1", model.StateQueued, ""), c, 150); err != nil {
		t.Fatal(err)
	}
	if c[0].Free[proto.ResNcpus] != 3 || len(c[1].Free) != 0 {
		t.Errorf("inside: n1 %v, n2 %v; want 3 cpus on n1 (4 less its job's 1), none on n2", c[0].Free, c[1].Free)
	}
	// Outside its window its jobs do not start.
	if err := v.Allows(job(3, "R1", model.StateQueued, ""), free(), 250); proto.CodeOf(err) != proto.PBSE_BADSTATE {
		t.Errorf("after its window: %v", err)
	}
}

func TestCheckNodes(t *testing.T) {
	t.Parallel()
	v, _ := view(t)
	other := &model.Resv{Seq: 2, Kind: model.ResvAdvance, State: proto.ResvUnconfirmed, Duration: 50, Count: 1, Occ: []model.ResvOcc{{Start: 150}}}
	v.Resvs.Insert(other)
	cases := []struct {
		nodes string
		start int64
		want  proto.Code
		text  string
	}{
		{"(n1:ncpus=4)", 150, proto.PBSE_NONE, ""},            // 4 + R1's 4 of 8
		{"(n1:ncpus=5)", 150, proto.PBSE_resvFail, "R1.srv"},  // overlaps R1
		{"(n1:ncpus=8)", 300, proto.PBSE_NONE, ""},            // after R1
		{"(n2:ncpus=9)", 150, proto.PBSE_resvFail, "has 8"},   // more than the node has
		{"(n7:ncpus=1)", 150, proto.PBSE_UNKNODE, "n7"},       // no such node
		{"(n1:ncpus=lots)", 150, proto.PBSE_BADATVAL, "lots"}, // not read
	}
	for _, c := range cases {
		other.Occ[0].Start = c.start
		err := v.CheckNodes(other, []string{c.nodes})
		if proto.CodeOf(err) != c.want || (c.text != "" && !strings.Contains(err.Error(), c.text)) {
			t.Errorf("%s at %d: %v, want code %d naming %q", c.nodes, c.start, err, c.want, c.text)
		}
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	v, _ := view(t)
	v.Resvs.Insert(&model.Resv{Seq: 3, Kind: model.ResvStanding, State: proto.ResvConfirmed, Duration: 10, Count: 2, Occ: []model.ResvOcc{{Start: 500}, {Start: 600}}})
	v.Resvs.Deny("R9.srv", "no room", time.Unix(0, 0))
	all := v.Status(&proto.StatusRequest{}, false)
	if len(all.Objects) != 2 || all.Objects[0].Name != "R1.srv" || all.Objects[1].Name != "S3.srv" {
		t.Fatalf("every reservation: %+v", all.Objects)
	}
	named := v.Status(&proto.StatusRequest{IDs: []string{"S3.srv", "R9.srv", "R8"}, Attrs: []string{proto.AttrResvState}}, true)
	if len(named.Objects) != 1 || len(named.Objects[0].Attrs) != 1 || named.Objects[0].Attrs[0].Name != proto.AttrResvState {
		t.Errorf("named, one attribute: %+v", named.Objects)
	}
	if len(named.Errors) != 2 || !strings.Contains(named.Errors[0].Text, "denied: no room") || named.Errors[1].Code != proto.PBSE_UNKRESVID {
		t.Errorf("refusals %+v", named.Errors)
	}
}
