package management

import (
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// qmgr's set and unset of the server and the sched object, step by step
// over real tables and a real store: what each takes, what it refuses in
// whose words, and where a shared attribute is kept.
func TestManageObjects(t *testing.T) {
	t.Parallel()
	tb := newTables(t)
	tb.t.Queues.Put(model.NewObject("workq"))
	h := NewObjects(tb, "srvhost")
	set := func(name, v string) proto.Attr { return proto.Attr{Name: name, Op: proto.OpSet, Value: v} }
	srv := func(cmd proto.ManagerCommand, attrs ...proto.Attr) error {
		r := &proto.ManagerRequest{Command: cmd, Object: proto.ObjServer, Attrs: attrs}
		return tb.Commit(func(b *store.Batch) error { return h.ManageServer(b, r, time.Unix(1000, 0)) })
	}
	sch := func(cmd proto.ManagerCommand, name string, attrs ...proto.Attr) error {
		r := &proto.ManagerRequest{Command: cmd, Object: proto.ObjSched, Name: name, Attrs: attrs}
		return tb.Commit(func(b *store.Batch) error { return h.ManageSched(b, r) })
	}
	for _, st := range []struct {
		name string
		err  error
		want proto.Code
		text string
	}{
		{"default_queue of a queue", srv(proto.MgrSet, set(proto.AttrDefaultQueue, "workq")), proto.PBSE_NONE, ""},
		{"default_queue of no queue", srv(proto.MgrSet, set(proto.AttrDefaultQueue, "nowhere")), proto.PBSE_UNKQUE, "nowhere"},
		{"next_job_number forward", srv(proto.MgrSet, set(proto.AttrNextJobNumber, "50")), proto.PBSE_NONE, ""},
		{"next_job_number back", srv(proto.MgrSet, set(proto.AttrNextJobNumber, "20")), proto.PBSE_BADATVAL, "never reused"},
		{"next_job_number not a number", srv(proto.MgrSet, set(proto.AttrNextJobNumber, "x")), proto.PBSE_BADATVAL, "want a job number"},
		{"default_qsub_arguments qsub refuses", srv(proto.MgrSet, set(proto.AttrDefaultQsubArguments, "-l")), proto.PBSE_BADATVAL, ""},
		{"default_qsub_arguments", srv(proto.MgrSet, set(proto.AttrDefaultQsubArguments, "-r n")), proto.PBSE_NONE, ""},
		{"eligible_time_enable", srv(proto.MgrSet, set(proto.AttrEligibleTimeEnable, "True")), proto.PBSE_NONE, ""},
		{"create the server", srv(proto.MgrCreate), proto.PBSE_IVALREQ, ""},
		{"create the default scheduler", sch(proto.MgrCreate, "default"), proto.PBSE_SCHEDEXIST, ""},
		{"create another scheduler", sch(proto.MgrCreate, "multi"), proto.PBSE_NOSUP, "one scheduler"},
		{"delete the default scheduler", sch(proto.MgrDelete, ""), proto.PBSE_SCHED_NO_DEL, ""},
		{"set another scheduler", sch(proto.MgrSet, "multi", set(proto.AttrLogEvents, "255")), proto.PBSE_UNKSCHED, ""},
		{"set the scheduler's own and a shared one", sch(proto.MgrSet, "default@srv", set(proto.AttrLogEvents, "255"), set(proto.AttrScheduling, "false")), proto.PBSE_NONE, ""},
	} {
		if got := code(st.err); got != st.want || (st.text != "" && !strings.Contains(st.err.Error(), st.text)) {
			t.Errorf("%s: %v (code %d), want code %d naming %q", st.name, st.err, got, st.want, st.text)
		}
	}
	if tb.nextSeq != 50 {
		t.Errorf("next job number %d, want 50", tb.nextSeq)
	}
	if dq, _ := tb.t.Server.Get(proto.AttrDefaultQueue); dq != "workq" {
		t.Errorf("default_queue %q", dq)
	}
	if tb.changes != 1 {
		t.Errorf("eligible time switched %d times, want once", tb.changes)
	}
	// A shared attribute is the server's, the scheduler's own beside it.
	if v, _ := tb.t.Server.Get(proto.AttrScheduling); v != "False" {
		t.Errorf("scheduling on the server: %q", v)
	}
	if _, ok := tb.sched.Get(proto.AttrScheduling); ok {
		t.Error("scheduling stored on the sched object too")
	}
	if v, _ := tb.sched.Get(proto.AttrLogEvents); v != "255" {
		t.Errorf("log_events on the sched object: %q", v)
	}
	// The store holds what the tables say.
	snap, err := tb.st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := snap.Server.Get(proto.AttrDefaultQueue); v != "workq" || snap.NextSeq != 50 {
		t.Errorf("stored: default_queue %q, next seq %d", v, snap.NextSeq)
	}
	if v, _ := snap.Sched.Get(proto.AttrLogEvents); v != "255" {
		t.Errorf("stored sched object: log_events %q", v)
	}
}
