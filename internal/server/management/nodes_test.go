package management

import (
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

func TestManageNodes(t *testing.T) {
	t.Parallel()
	tb := newTables(t)
	h := NewNodes(tb, 15002)
	set := func(name, v string) proto.Attr { return proto.Attr{Name: name, Op: proto.OpSet, Value: v} }
	req := func(cmd proto.ManagerCommand, name string, attrs ...proto.Attr) *proto.ManagerRequest {
		return &proto.ManagerRequest{Command: cmd, Object: proto.ObjNode, Name: name, Attrs: attrs}
	}
	now := int64(1000)
	manage := func(r *proto.ManagerRequest) error {
		return tb.Commit(func(b *store.Batch) error { return h.Manage(b, r, now) })
	}
	steps := []struct {
		name string
		req  *proto.ManagerRequest
		want proto.Code
	}{
		{"create", req(proto.MgrCreate, "n1"), proto.PBSE_NONE},
		{"create with a port", req(proto.MgrCreate, "n2", set(proto.AttrNodePort, "16002")), proto.PBSE_NONE},
		{"a vnode's name", req(proto.MgrCreate, "n3[0]"), proto.PBSE_NONE},
		{"create again", req(proto.MgrCreate, "n1"), proto.PBSE_NODEEXIST},
		{"a bad name", req(proto.MgrCreate, "no way"), proto.PBSE_IVAL_OBJ_NAME},
		{"set an unknown node", req(proto.MgrSet, "n9", set(proto.AttrComment, "x")), proto.PBSE_UNKNODE},
		{"delete an unknown node", req(proto.MgrDelete, "n9"), proto.PBSE_UNKNODE},
	}
	for _, st := range steps {
		if got := code(manage(st.req)); got != st.want {
			t.Fatalf("%s: code %d, want %d", st.name, got, st.want)
		}
	}
	n1, _ := tb.t.Nodes.Get("n1")
	for attr, want := range map[string]string{proto.AttrNodeMom: "n1", proto.AttrNodePort: "15002", proto.AttrNodeNtype: model.NodePBS, proto.AttrNodeLastState: "1000"} {
		if v, _ := n1.Get(attr); v != want {
			t.Errorf("n1 %s = %q, want %q", attr, v, want)
		}
	}
	if n2, ok := tb.t.Nodes.Get("n2"); !ok || mustGet(n2, proto.AttrNodePort) != "16002" {
		t.Errorf("n2 (%v) has not the port asked for", ok)
	}

	// A change of state marks when; another change does not.
	now = 2000
	if err := manage(req(proto.MgrSet, "n1", set(proto.AttrNodeState, model.NodeOffline))); err != nil {
		t.Fatal(err)
	}
	now = 3000
	if err := manage(req(proto.MgrSet, "n1", set(proto.AttrComment, "disk"))); err != nil {
		t.Fatal(err)
	}
	n1, _ = tb.t.Nodes.Get("n1")
	if v, _ := n1.Get(proto.AttrNodeLastState); v != "2000" {
		t.Errorf("last_state_change_time %q, want the offline's 2000", v)
	}

	// A node a running job uses is kept, whether named or with every node.
	j := &model.Job{Seq: 1, ID: "1.srv", Owner: "u@h", Queue: "workq", State: model.StateRunning, Alloc: resc.ParseAlloc("n2/0", "(n2:ncpus=1)")}
	tb.t.Jobs.Insert(j)
	for _, name := range []string{"n2", ""} {
		if err := manage(req(proto.MgrDelete, name)); code(err) != proto.PBSE_OBJBUSY {
			t.Errorf("delete %q with a job on n2: %v", name, err)
		}
	}
	if err := manage(req(proto.MgrDelete, "n1")); err != nil {
		t.Errorf("delete of an idle node: %v", err)
	}
	tb.t.Jobs.Remove(j)
	if err := manage(req(proto.MgrDelete, "")); err != nil {
		t.Errorf("delete of every node: %v", err)
	}
	snap, err := tb.st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Nodes) != 0 || tb.t.Nodes.Len() != 0 || len(tb.t.Nodes.Names()) != 0 {
		t.Errorf("after deleting every node: %d stored, %d in the table", len(snap.Nodes), tb.t.Nodes.Len())
	}
}

func mustGet(o *model.Object, name string) string {
	v, _ := o.Get(name)
	return v
}
