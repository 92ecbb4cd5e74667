package server

import (
	"testing"

	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// TestRunAs: User_List may name only the submitting user; group_list sets
// the job's group when the user is in it and is refused otherwise, also
// by qalter.
func TestRunAs(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	attr := func(name, v string) proto.Attr { return proto.Attr{Name: name, Value: v} }
	if _, err := submit(c, attr(proto.AttrUserList, "nobody")); proto.CodeOf(err) != proto.PBSE_BADUSER {
		t.Errorf("User_List naming another user: %v", err)
	}
	if _, err := submit(c, attr(proto.AttrGroupList, "nogroup")); proto.CodeOf(err) != proto.PBSE_BADGRP {
		t.Errorf("group_list naming a group root is not in: %v", err)
	}
	id := mustSubmit(t, c, attr(proto.AttrUserList, "root@elsewhere,root"), attr(proto.AttrGroupList, "root@n1,root"))
	if got := jobAttr(t, c, id, proto.AttrEgroup); got != "root" {
		t.Errorf("egroup %q", got)
	}
	if err := c.AlterJob(id, []proto.Attr{attr(proto.AttrGroupList, "nogroup")}); proto.CodeOf(err) != proto.PBSE_BADGRP {
		t.Errorf("qalter -W group_list naming a group root is not in: %v", err)
	}
}
