package jobs

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state/statetest"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// view is a View over real state tables: alice's queued job 1 in workq,
// bob's running job 2 in long, alice's array 3[1-3] in workq with subjob
// 2 running, and alice's finished job 4.
func view(t *testing.T) View {
	t.Helper()
	tb := statetest.New(1)
	v := View{Jobs: tb.Jobs, Queues: tb.Queues, Table: tb.Table, ServerName: "srv", Epoch: "e1"}
	v.Queues.Put(model.NewObject("workq"))
	v.Queues.Put(model.NewObject("long"))
	mk := func(seq int64, user, queue string, st model.JobState) *model.Job {
		j := &model.Job{Seq: seq, ID: fmt.Sprintf("%d.srv", seq), Name: fmt.Sprintf("job%d", seq), Owner: user + "@h", EUser: user, Queue: queue, State: st, QueueRank: seq}
		j.ResourceList = j.ResourceList.Set(proto.ResNcpus, fmt.Sprint(seq))
		return j
	}
	v.Jobs.Insert(mk(1, "alice", "workq", model.StateQueued))
	v.Jobs.Insert(mk(2, "bob", "long", model.StateRunning))
	p := mk(3, "alice", "workq", model.StateBegun)
	p.ID = "3[].srv"
	p.Array = &model.Array{Indices: model.IndexSet{{Lo: 1, Hi: 3, Step: 1}}, Queued: model.IndexSet{{Lo: 1, Hi: 1, Step: 1}, {Lo: 3, Hi: 3, Step: 1}}}
	v.Jobs.Insert(p)
	s := mk(3, "alice", "workq", model.StateRunning)
	s.ID, s.IsSubjob, s.Index = "3[2].srv", true, 2
	v.Jobs.Insert(s)
	v.Jobs.Insert(mk(4, "alice", "workq", model.StateFinished))
	return v
}

// status runs a status request and gives the ids listed and the codes
// refused.
func status(t *testing.T, v View, req *proto.StatusRequest, who Caller) ([]string, []proto.Code) {
	t.Helper()
	frames := proto.NewStatusFrames(4)
	var tail proto.StatusReply
	v.Status(req, who, 100, frames, &tail)
	reply, err := frames.Collect(&tail)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range reply.Objects {
		ids = append(ids, o.Name)
	}
	var codes []proto.Code
	for _, e := range reply.Errors {
		codes = append(codes, e.Code)
	}
	if reply.Epoch != "e1" || reply.Version != v.Jobs.Version() {
		t.Errorf("listing epoch %q version %d", reply.Epoch, reply.Version)
	}
	return ids, codes
}

func TestStatus(t *testing.T) {
	t.Parallel()
	v := view(t)
	alice, bob, op := Caller{User: "alice"}, Caller{User: "bob"}, Caller{User: "root", Privileged: true}
	cases := []struct {
		name  string
		req   proto.StatusRequest
		who   Caller
		ids   []string
		codes []proto.Code
	}{
		{"every job, an operator", proto.StatusRequest{}, op, []string{"1.srv", "2.srv", "3[].srv"}, nil},
		{"with the history", proto.StatusRequest{History: true}, op, []string{"1.srv", "2.srv", "3[].srv", "4.srv"}, nil},
		{"every subjob", proto.StatusRequest{Subjobs: true}, op, []string{"1.srv", "2.srv", "3[].srv", "3[1].srv", "3[2].srv", "3[3].srv"}, nil},
		{"a scheduler's", proto.StatusRequest{LiveSubjobs: true}, op, []string{"1.srv", "2.srv", "3[].srv", "3[2].srv"}, nil},
		{"alice's own", proto.StatusRequest{}, alice, []string{"1.srv", "3[].srv"}, nil},
		{"a queue", proto.StatusRequest{IDs: []string{"long@srv"}}, op, []string{"2.srv"}, nil},
		{"a range", proto.StatusRequest{IDs: []string{"3[2-3].srv"}}, op, []string{"3[2].srv", "3[3].srv"}, nil},
		{"refusals", proto.StatusRequest{IDs: []string{"9", "2", "4", "nope@srv", "3[7]", "1[]"}}, bob,
			[]string{"2.srv"}, []proto.Code{proto.PBSE_UNKJOBID, proto.PBSE_PERM, proto.PBSE_UNKQUE, proto.PBSE_PERM, proto.PBSE_UNKJOBID}}, // 3[7]: alice's array, hidden before its indices
		{"finished, without the history", proto.StatusRequest{IDs: []string{"4"}}, alice, nil, []proto.Code{proto.PBSE_HISTJOBID}},
		{"an index the array has not", proto.StatusRequest{IDs: []string{"3[7]"}}, alice, nil, []proto.Code{proto.PBSE_UNKJOBID}},
	}
	for _, c := range cases {
		ids, codes := status(t, v, &c.req, c.who)
		if !slices.Equal(ids, c.ids) || !slices.Equal(codes, c.codes) {
			t.Errorf("%s: listed %v refused %v; want %v and %v", c.name, ids, codes, c.ids, c.codes)
		}
	}
	// query_other_jobs lets anyone see every job.
	v.QueryOthers = true
	if ids, _ := status(t, v, &proto.StatusRequest{}, bob); len(ids) != 3 {
		t.Errorf("with query_other_jobs bob sees %v", ids)
	}
	// A scheduler's incremental fetch: only what changed since, every
	// live id still named.
	since := v.Jobs.Version()
	one, _ := v.Jobs.Top(1)
	v.Jobs.Touch(one)
	frames := proto.NewStatusFrames(4)
	var tail proto.StatusReply
	v.Status(&proto.StatusRequest{Since: since, Epoch: "e1"}, op, 100, frames, &tail)
	reply, _ := frames.Collect(&tail)
	if len(reply.Objects) != 1 || reply.Objects[0].Name != "1.srv" || len(reply.Live) != 3 {
		t.Errorf("incremental: %d objects (%v), live %v", len(reply.Objects), reply.Objects, reply.Live)
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	v := view(t)
	op := Caller{User: "root", Privileged: true}
	crit := func(name, res string, o proto.Op, value string) proto.Attr {
		return proto.Attr{Name: name, Resource: res, Op: o, Value: value}
	}
	cases := []struct {
		name    string
		req     proto.SelectRequest
		who     Caller
		want    []string
		wantErr proto.Code
	}{
		{"everything", proto.SelectRequest{}, op, []string{"1.srv", "2.srv", "3[].srv"}, 0},
		{"bob sees his own", proto.SelectRequest{}, Caller{User: "bob"}, []string{"2.srv"}, 0},
		{"by state", proto.SelectRequest{Criteria: []proto.Attr{crit(proto.AttrJobState, "", proto.OpEQ, "Q")}}, op, []string{"1.srv"}, 0},
		{"not running", proto.SelectRequest{Criteria: []proto.Attr{crit(proto.AttrJobState, "", proto.OpNE, "R")}}, op, []string{"1.srv", "3[].srv"}, 0},
		{"by owner", proto.SelectRequest{Criteria: []proto.Attr{crit(proto.AttrJobOwner, "", proto.OpEQ, "bob@h")}}, op, []string{"2.srv"}, 0},
		{"by queue", proto.SelectRequest{Criteria: []proto.Attr{crit(proto.AttrQueue, "", proto.OpEQ, "workq")}}, op, []string{"1.srv", "3[].srv"}, 0},
		{"an unknown queue", proto.SelectRequest{Criteria: []proto.Attr{crit(proto.AttrQueue, "", proto.OpEQ, "nope")}}, op, nil, proto.PBSE_UNKQUE},
		{"arrays", proto.SelectRequest{Criteria: []proto.Attr{crit(proto.AttrArray, "", proto.OpEQ, "True")}}, op, []string{"3[].srv"}, 0},
		{"ncpus at least 2", proto.SelectRequest{Criteria: []proto.Attr{crit(proto.AttrResourceList, proto.ResNcpus, proto.OpGE, "2")}}, op, []string{"2.srv", "3[].srv"}, 0},
		{"subjobs for arrays", proto.SelectRequest{Subjobs: true, Criteria: []proto.Attr{crit(proto.AttrJobState, "", proto.OpEQ, "R")}}, op, []string{"2.srv", "3[2].srv"}, 0},
		{"history", proto.SelectRequest{History: true, Criteria: []proto.Attr{crit(proto.AttrJobState, "", proto.OpEQ, "F")}}, op, []string{"4.srv"}, 0},
		{"an unknown attribute", proto.SelectRequest{Criteria: []proto.Attr{crit("colour", "", proto.OpEQ, "red")}}, op, nil, proto.PBSE_NOATTR},
		{"an order on text", proto.SelectRequest{Criteria: []proto.Attr{crit(proto.AttrJobName, "", proto.OpGT, "job1")}}, op, nil, proto.PBSE_BADATVAL},
	}
	for _, c := range cases {
		reply, err := v.Select(&c.req, c.who, 100)
		if c.wantErr != 0 {
			if proto.CodeOf(err) != c.wantErr {
				t.Errorf("%s: %v, want code %d", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(reply.IDs, c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, reply, err, c.want)
		}
	}
}

// A scheduler's fetch gets each started job's allocation typed beside its
// attributes; other answers, and those without exec_vnode, do not.
func TestStatusAlloc(t *testing.T) {
	t.Parallel()
	v := view(t)
	j := &model.Job{Seq: 5, ID: "5.srv", Owner: "bob@h", EUser: "bob", Queue: "long", State: model.StateRunning, QueueRank: 5,
		Alloc: resc.ParseAlloc("h/0*2+g/0", "(h[0]:ncpus=2:mem=1gb)+(g:ncpus=1)")}
	v.Jobs.Insert(j)
	want := []proto.Held{
		{Vnode: "h[0]", Host: "h", Ncpus: 2, Resources: []proto.ResourceValue{{Name: "ncpus", Value: "2"}, {Name: "mem", Value: "1gb"}}},
		{Vnode: "g", Host: "g", Ncpus: 1, Resources: []proto.ResourceValue{{Name: "ncpus", Value: "1"}}},
	}
	op := Caller{User: "root", Privileged: true}
	for _, tc := range []struct {
		name string
		req  proto.StatusRequest
		want []proto.Held
	}{
		{"asked", proto.StatusRequest{IDs: []string{"5.srv", "1.srv"}, Alloc: true}, want},
		{"asked with exec_vnode", proto.StatusRequest{IDs: []string{"5.srv"}, Attrs: []string{proto.AttrExecVnode}, Alloc: true}, want},
		{"asked without exec_vnode", proto.StatusRequest{IDs: []string{"5.srv"}, Attrs: []string{proto.AttrJobState}, Alloc: true}, nil},
		{"not asked", proto.StatusRequest{IDs: []string{"5.srv"}}, nil},
	} {
		frames := proto.NewStatusFrames(4)
		var tail proto.StatusReply
		v.Status(&tc.req, op, 100, frames, &tail)
		reply, err := frames.Collect(&tail)
		if err != nil || len(reply.Objects) == 0 {
			t.Fatalf("%s: %+v, %v", tc.name, reply, err)
		}
		if got := reply.Objects[0].Alloc; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: allocation %+v, want %+v", tc.name, got, tc.want)
		}
		for _, o := range reply.Objects[1:] {
			if o.Alloc != nil {
				t.Errorf("%s: queued job %s holds %+v", tc.name, o.Name, o.Alloc)
			}
		}
	}
}
