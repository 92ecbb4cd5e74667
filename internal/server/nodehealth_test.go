package server

import (
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// A mom whose health check fails has its node taken offline with the
// check's message as the comment, marked as the check's; the mark
// survives a server restart, and a passing check then brings the node
// back and clears the comment. An offline of an operator is not undone
// by a passing check, nor overwritten by a failing one.
func TestNodeHealthOfflinesAndRestores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, c := newTestServerAt(t, dir, func(*Config) {})
	for _, n := range []string{"n1", "n2"} {
		if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjNode, Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	report := func(s *Server, node, health string) {
		t.Helper()
		if _, err := s.momStatus(&caller{name: node, role: proto.RoleMom}, &proto.MomStatus{Node: node, Ncpus: 2, Physmem: 1 << 30, IdealLoad: -1, MaxLoad: -1, Health: health}); err != nil {
			t.Fatal(err)
		}
	}
	look := func(c *proto.Client, node string) (state, comment, mark string) {
		t.Helper()
		nodes, _, err := c.StatusNodes(&proto.StatusRequest{IDs: []string{node}})
		if err != nil || len(nodes) != 1 {
			t.Fatalf("status of %s: %v %v", node, nodes, err)
		}
		state, _ = nodes[0].Get(proto.AttrNodeState)
		comment, _ = nodes[0].Get(proto.AttrComment)
		mark, _ = nodes[0].Get(proto.AttrNodeOfflineByCheck)
		return state, comment, mark
	}
	const bad = "ERROR: /scratch is full"
	report(s, "n1", "")
	if st, _, _ := look(c, "n1"); st != "free" {
		t.Fatalf("healthy node: state %q", st)
	}
	report(s, "n1", bad)
	if st, note, mark := look(c, "n1"); st != "offline" || note != bad || mark != bad {
		t.Fatalf("after a failed check: state %q comment %q offline_by_check %q", st, note, mark)
	}

	// An operator's offline of n2, then a failing and a passing check.
	if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjNode, Name: "n2", Attrs: []proto.Attr{
		{Name: proto.AttrNodeState, Value: "offline"}, {Name: proto.AttrComment, Value: "new disks"}}}); err != nil {
		t.Fatal(err)
	}
	report(s, "n2", bad)
	if st, note, mark := look(c, "n2"); st != "offline" || note != "new disks" || mark != "" {
		t.Fatalf("operator's offline after a failed check: state %q comment %q offline_by_check %q", st, note, mark)
	}

	s.Close()
	s, c = newTestServerAt(t, dir, func(*Config) {})
	report(s, "n2", "")
	if st, note, _ := look(c, "n2"); st != "offline" || note != "new disks" {
		t.Errorf("operator's offline after a passing check: state %q comment %q", st, note)
	}
	if _, _, mark := look(c, "n1"); mark != bad {
		t.Fatalf("after a restart offline_by_check = %q", mark)
	}
	report(s, "n1", "")
	if st, note, mark := look(c, "n1"); st != "free" || note != "" || mark != "" {
		t.Fatalf("after a passing check: state %q comment %q offline_by_check %q", st, note, mark)
	}

	// A manager who offlines a node the check took offline makes the
	// offline theirs: a passing check leaves it.
	report(s, "n1", bad)
	if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjNode, Name: "n1", Attrs: []proto.Attr{{Name: proto.AttrNodeState, Value: "offline"}}}); err != nil {
		t.Fatal(err)
	}
	report(s, "n1", "")
	if st, note, mark := look(c, "n1"); st != "offline" || note != bad || mark != "" {
		t.Errorf("manager's offline after a passing check: state %q comment %q offline_by_check %q", st, note, mark)
	}
}
