package management

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

func TestManageQueues(t *testing.T) {
	t.Parallel()
	tb := newTables(t)
	h := NewQueues(tb, hclog.NewNullLogger())
	set := func(name, v string) proto.Attr { return proto.Attr{Name: name, Op: proto.OpSet, Value: v} }
	req := func(cmd proto.ManagerCommand, name string, attrs ...proto.Attr) *proto.ManagerRequest {
		return &proto.ManagerRequest{Command: cmd, Object: proto.ObjQueue, Name: name, Attrs: attrs}
	}
	manage := func(r *proto.ManagerRequest) error {
		return tb.Commit(func(b *store.Batch) error { return h.Manage(b, r) })
	}
	tb.t.Server.Set(proto.AttrDefaultQueue, "", "workq")
	steps := []struct {
		name string
		req  *proto.ManagerRequest
		want proto.Code
		text string // in the refusal
	}{
		{"create", req(proto.MgrCreate, "workq", set(proto.AttrQueueTypeQ, "Execution"), set(proto.AttrEnabled, "True")), proto.PBSE_NONE, ""},
		{"create again", req(proto.MgrCreate, "workq"), proto.PBSE_QUEEXIST, ""},
		{"a bad name", req(proto.MgrCreate, "9 lives"), proto.PBSE_IVAL_OBJ_NAME, "9 lives"},
		{"enabled without a type", req(proto.MgrCreate, "q2", set(proto.AttrEnabled, "True")), proto.PBSE_QUENOEN, "queue_type"},
		{"routing to itself", req(proto.MgrCreate, "r", set(proto.AttrQueueTypeQ, "Route"), set(proto.AttrRouteDestinations, "r")), proto.PBSE_BADATVAL, "itself"},
		{"routing to no queue", req(proto.MgrCreate, "r", set(proto.AttrQueueTypeQ, "Route"), set(proto.AttrRouteDestinations, "nowhere")), proto.PBSE_UNKQUE, "nowhere"},
		{"routing elsewhere", req(proto.MgrCreate, "r", set(proto.AttrQueueTypeQ, "Route"), set(proto.AttrRouteDestinations, "workq,q@other")), proto.PBSE_NONE, ""},
		{"set an unknown queue", req(proto.MgrSet, "nope", set(proto.AttrEnabled, "True")), proto.PBSE_UNKQUE, ""},
		{"delete an unknown queue", req(proto.MgrDelete, "nope"), proto.PBSE_UNKQUE, ""},
	}
	for _, st := range steps {
		err := manage(st.req)
		if got := code(err); got != st.want || (st.text != "" && !strings.Contains(err.Error(), st.text)) {
			t.Fatalf("%s: %v (code %d), want code %d naming %q", st.name, err, got, st.want, st.text)
		}
	}

	// A queue with jobs is neither deleted nor made another type.
	j := &model.Job{Seq: 1, ID: "1.srv", Owner: "u@h", Queue: "workq", State: model.StateQueued}
	tb.t.Jobs.Insert(j)
	if err := manage(req(proto.MgrDelete, "workq")); code(err) != proto.PBSE_OBJBUSY {
		t.Errorf("delete of a queue with a job: %v", err)
	}
	if err := manage(req(proto.MgrSet, "workq", set(proto.AttrQueueTypeQ, "Route"))); code(err) != proto.PBSE_OBJBUSY {
		t.Errorf("retype of a queue with a job: %v", err)
	}
	// A reservation's queue goes with its reservation only.
	tb.t.Resvs.Insert(&model.Resv{Seq: 12, Kind: model.ResvAdvance})
	if err := manage(req(proto.MgrCreate, "R12", set(proto.AttrQueueTypeQ, "Execution"))); err != nil {
		t.Fatal(err)
	}
	if err := manage(req(proto.MgrDelete, "R12")); code(err) != proto.PBSE_OBJBUSY || !strings.Contains(err.Error(), "pbs_rdel") {
		t.Errorf("delete of a reservation's queue: %v", err)
	}

	// The default queue deleted: the server has none (as OpenPBS).
	tb.t.Jobs.Remove(j)
	if err := manage(req(proto.MgrDelete, "workq")); err != nil {
		t.Fatalf("delete of an empty queue: %v", err)
	}
	if v, ok := tb.t.Server.Get(proto.AttrDefaultQueue); ok {
		t.Errorf("default_queue is still %q", v)
	}
	snap, err := tb.st.Load()
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, q := range snap.Queues {
		stored = append(stored, q.Name)
	}
	if strings.Join(stored, ",") != "R12,r" {
		t.Errorf("the store holds queues %v", stored)
	}
	if _, ok := snap.Server.Get(proto.AttrDefaultQueue); ok {
		t.Errorf("the stored server still has a default queue")
	}

	// The listing: every queue with its counts, or those named.
	all := h.Status(&proto.StatusRequest{}, true)
	if len(all.Objects) != 2 || all.Objects[0].Name != "R12" || all.Objects[1].Name != "r" {
		t.Fatalf("listing %+v", all.Objects)
	}
	named := h.Status(&proto.StatusRequest{IDs: []string{"r@srv", "gone"}, Attrs: []string{proto.AttrTotalJobs}}, false)
	if len(named.Objects) != 1 || len(named.Objects[0].Attrs) != 1 || named.Objects[0].Attrs[0].Value != "0" ||
		len(named.Errors) != 1 || named.Errors[0].Code != proto.PBSE_UNKQUE {
		t.Errorf("named listing %+v", named)
	}
}
