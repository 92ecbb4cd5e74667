package server

import (
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// A mom's vnode definitions: a vnode that does not exist is created on
// that mom; a node of another mom is never taken over nor changed; the
// mom's own node takes its definition's attributes, a manager's change
// since stays until the definition changes; a vnode no longer reported
// goes Stale and comes back when reported again.
func TestVnodeDefinitionsFromReports(t *testing.T) {
	t.Parallel()
	s, c := newTestServerAt(t, t.TempDir(), func(*Config) {})
	for _, n := range []struct{ name, port string }{{"h1", "15003"}, {"other", "15010"}} {
		if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjNode, Name: n.name,
			Attrs: []proto.Attr{{Name: proto.AttrNodeMom, Value: "localhost"}, {Name: proto.AttrNodePort, Value: n.port}}}); err != nil {
			t.Fatal(err)
		}
	}
	report := func(attrs map[string]string, vn ...proto.VnodeStatus) {
		t.Helper()
		if _, err := s.momStatus(&caller{name: "h1", role: proto.RoleMom}, &proto.MomStatus{Node: "h1", Ncpus: 4, Physmem: 1 << 30,
			IdealLoad: -1, MaxLoad: -1, NodeAttrs: attrs, Vnodes: vn}); err != nil {
			t.Fatal(err)
		}
	}
	look := func(node, attr string) string {
		t.Helper()
		nodes, _, err := c.StatusNodes(&proto.StatusRequest{IDs: []string{node}})
		if err != nil || len(nodes) != 1 {
			t.Fatalf("status of %s: %v %v", node, nodes, err)
		}
		v, _ := nodes[0].Get(attr)
		return v
	}
	v0 := proto.VnodeStatus{Name: "h1[0]", Ncpus: 2, Physmem: 1 << 30, Attrs: map[string]string{proto.AttrNodeSharing: "force_shared"}}
	stolen := proto.VnodeStatus{Name: "other", Ncpus: 64}
	badAttr := proto.VnodeStatus{Name: "h1[1]", Ncpus: 1, Attrs: map[string]string{proto.AttrNodeSharing: "force_excl", "Mom": "elsewhere"}}
	report(map[string]string{proto.AttrNodeResvEnable: "False"}, v0, stolen, badAttr)
	if st, port, sh := look("h1[0]", proto.AttrNodeState), look("h1[0]", proto.AttrNodePort), look("h1[0]", proto.AttrNodeSharing); st != "free" || port != "15003" || sh != "force_shared" {
		t.Errorf("created vnode: state %q Port %q sharing %q", st, port, sh)
	}
	if got := look("h1[1]", proto.AttrNodeSharing); got != "default_shared" {
		t.Errorf("a refused sharing value was applied: %q", got)
	}
	if got := look("h1[1]", proto.AttrNodeMom); got != "localhost" {
		t.Errorf("a mom set its vnode's Mom: %q", got)
	}
	if st, port := look("other", proto.AttrNodeState), look("other", proto.AttrNodePort); st == "free" || port != "15010" {
		t.Errorf("another mom's node was taken over: state %q Port %q", st, port)
	}
	if got := look("h1", proto.AttrNodeResvEnable); got != "False" {
		t.Errorf("the mom's own node's definition: resv_enable %q", got)
	}
	// A manager's change stays while the definition says the same.
	if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjNode, Name: "h1",
		Attrs: []proto.Attr{{Name: proto.AttrNodeResvEnable, Value: "True"}}}); err != nil {
		t.Fatal(err)
	}
	report(map[string]string{proto.AttrNodeResvEnable: "False"}, v0, badAttr)
	if got := look("h1", proto.AttrNodeResvEnable); got != "True" {
		t.Errorf("the manager's resv_enable was overwritten by an unchanged definition: %q", got)
	}
	report(nil, badAttr)
	if got := look("h1[0]", proto.AttrNodeState); got != "Stale" {
		t.Errorf("a vnode no longer reported: state %q, want Stale", got)
	}
	if got := look("h1", proto.AttrNodeState); got != "free" {
		t.Errorf("the mom's own node: state %q", got)
	}
	report(nil, v0, badAttr)
	if got := look("h1[0]", proto.AttrNodeState); got != "free" {
		t.Errorf("a vnode reported again: state %q, want free", got)
	}
}
