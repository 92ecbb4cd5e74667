package nodes

import (
	"slices"
	"strconv"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/internal/server/state/statetest"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// view is a View over real state tables holding nodes n1..n3, each
// reported by its mom with 4 cpus.
func view(t *testing.T) View {
	t.Helper()
	tb := statetest.New(100)
	v := View{Nodes: tb.Nodes, Jobs: tb.Jobs, Resvs: tb.Resvs, Table: tb.Table, ServerName: "srv"}
	for _, name := range []string{"n1", "n2", "n3"} {
		v.Nodes.Put(model.NewNode(name, name, "15002", name))
		v.Nodes.Report(name, proto.MomStatus{Node: name, Ncpus: 4, Arch: "linux", IdealLoad: -1, MaxLoad: -1})
	}
	return v
}

func running(seq int64, ev, place string) *model.Job {
	j := &model.Job{Seq: seq, ID: strconv.FormatInt(seq, 10) + ".srv", Owner: "u@h", Queue: "workq", State: model.StateRunning, Alloc: resc.ParseAlloc("", ev)}
	j.ResourceList = j.ResourceList.Set(proto.ResPlace, place)
	return j
}

func TestState(t *testing.T) {
	t.Parallel()
	v := view(t)
	v.Jobs.Insert(running(1, "(n1:ncpus=4)", "free"))
	v.Jobs.Insert(running(2, "(n2:ncpus=1)", "excl"))
	cases := []struct {
		name  string
		node  string
		setup func(n *model.Object, rt *state.Runtime)
		want  string
	}{
		{"every cpu taken", "n1", nil, model.NodeJobBusy},
		{"held whole", "n2", nil, model.NodeJobExcl},
		{"idle", "n3", nil, model.NodeFree},
		{"busy by load", "n3", func(_ *model.Object, rt *state.Runtime) { rt.LoadBusy = true }, model.NodeBusy},
		{"down", "n3", func(_ *model.Object, rt *state.Runtime) { rt.Down = true }, model.NodeDown},
		{"stale", "n3", func(_ *model.Object, rt *state.Runtime) { rt.Stale = true }, model.NodeStale},
		{"offline", "n3", func(n *model.Object, _ *state.Runtime) { n.Set(proto.AttrNodeState, "", model.NodeOffline) }, model.NodeOffline},
		{"offline and busy", "n1", func(n *model.Object, _ *state.Runtime) { n.Set(proto.AttrNodeState, "", model.NodeOffline) }, model.NodeOffline + "," + model.NodeJobBusy},
	}
	for _, c := range cases {
		n, _ := v.Nodes.Get(c.node)
		n = n.Clone()
		rt := *v.Nodes.Runtime(c.node)
		if c.setup != nil {
			c.setup(n, v.Nodes.Runtime(c.node))
		}
		if got := v.State(n); got != c.want {
			t.Errorf("%s: %s is %q, want %q", c.name, c.node, got, c.want)
		}
		*v.Nodes.Runtime(c.node) = rt
	}
	unknown := model.NewNode("n9", "n9", "15002", "n9")
	v.Nodes.Put(unknown)
	if got := v.State(unknown); got != model.NodeUnknown+","+model.NodeDown {
		t.Errorf("a node never reported is %q", got)
	}
}

func TestOverloaded(t *testing.T) {
	t.Parallel()
	v := view(t)
	n, _ := v.Nodes.Get("n1")
	rt := v.Nodes.Runtime("n1")
	rt.Status.IdealLoad, rt.Status.MaxLoad = 2, 4
	cases := []struct {
		load float64
		busy bool // before
		want bool
	}{
		{1, false, false},
		{4, false, false}, // at max_load: not above it
		{4.5, false, true},
		{3, true, true},    // coming down, above ideal_load: still busy
		{1.5, true, false}, // below ideal_load: free again
	}
	for _, c := range cases {
		rt.Status.Loadave, rt.LoadBusy = c.load, c.busy
		if got := Overloaded(v.Nodes, n, rt); got != c.want {
			t.Errorf("load %v (busy %v): overloaded %v, want %v", c.load, c.busy, got, c.want)
		}
	}
	// A manager's max_load wins over the mom's.
	c := n.Clone()
	c.Set(proto.AttrNodeMaxLoad, "", "8")
	v.Nodes.Put(c)
	rt.Status.Loadave, rt.LoadBusy = 6, false
	if Overloaded(v.Nodes, c, rt) {
		t.Errorf("load 6 is over the node's own max_load 8")
	}
	if ideal, maxLoad := LoadLimits(v.Nodes, c, rt); ideal != 2 || maxLoad != 8 {
		t.Errorf("limits %v, %v; want the mom's ideal 2 and the node's max 8", ideal, maxLoad)
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	v := view(t)
	v.Jobs.Insert(running(1, "(n1:ncpus=1)+(n1:ncpus=1)+(n2:ncpus=2)", "free"))
	r := &model.Resv{Seq: 5, Kind: model.ResvAdvance, State: proto.ResvConfirmed, Occ: []model.ResvOcc{{Start: 10, Nodes: "(n2:ncpus=1)"}}}
	v.Resvs.Insert(r)
	if got := v.JobsByNode(); !slices.Equal(got["n1"], []string{"1.srv/0", "1.srv/1"}) || !slices.Equal(got["n2"], []string{"1.srv/0"}) {
		t.Errorf("jobs by node %v", got)
	}
	if got := v.ResvsByNode(); !slices.Equal(got["n2"], []string{"R5.srv"}) || len(got["n1"]) != 0 {
		t.Errorf("reservations by node %v", got)
	}

	frames := proto.NewStatusFrames(16)
	var tail proto.StatusReply
	v.Status(&proto.StatusRequest{IDs: []string{"n2", "gone"}}, frames, &tail.Errors)
	reply, err := frames.Collect(&tail)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Errors) != 1 || reply.Errors[0].Code != proto.PBSE_UNKNODE {
		t.Errorf("errors %+v", reply.Errors)
	}
	if len(reply.Objects) != 1 || reply.Objects[0].Name != "n2" {
		t.Fatalf("rendered %+v", reply.Objects)
	}
	attrs := map[string]string{}
	for _, a := range reply.Objects[0].Attrs {
		attrs[a.FullName()] = a.Value
	}
	for name, want := range map[string]string{
		proto.AttrNodeState: model.NodeFree,
		proto.AttrNodeJobs:  "1.srv/0",
		proto.AttrNodeResvs: "R5.srv",
		proto.AttrResourcesAssigned + "." + proto.ResNcpus: "2",
		proto.AttrResourcesAvail + "." + proto.ResNcpus:    "4",
		proto.AttrNodePcpus: "4",
	} {
		if attrs[name] != want {
			t.Errorf("%s = %q, want %q", name, attrs[name], want)
		}
	}
}
