package admit

import (
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state/statetest"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// view is a View over real state tables: execution queue workq (enabled,
// started), route queue routeq to workq, and a server with no limits.
func view(t *testing.T) View {
	t.Helper()
	tb := statetest.New(1)
	v := View{Jobs: tb.Jobs, Queues: tb.Queues, Server: model.DefaultServer("srv", "root@*"), Table: tb.Table}
	wq := model.NewObject("workq")
	wq.Set(proto.AttrQueueTypeQ, "", "Execution")
	wq.Set(proto.AttrEnabled, "", "True")
	wq.Set(proto.AttrStarted, "", "True")
	v.Queues.Put(wq)
	rq := model.NewObject("routeq")
	rq.Set(proto.AttrQueueTypeQ, "", "Route")
	rq.Set(proto.AttrEnabled, "", "True")
	rq.Set(proto.AttrStarted, "", "True")
	rq.Set(proto.AttrRouteDestinations, "", "workq")
	v.Queues.Put(rq)
	return v
}

// queue is a copy of queue name with one attribute set (a queue is
// replaced whole in its table).
func (v View) set(name, attr, resource, value string) *model.Object {
	q, _ := v.Queues.Get(name)
	c := q.Clone()
	c.Set(attr, resource, value)
	v.Queues.Put(c)
	return c
}

func submitted(seq int64, user string, rl ...string) *model.Job {
	j := &model.Job{Seq: seq, ID: "x", Owner: user + "@h", EUser: user, EGroup: "g", SubmitHost: "h.example", State: model.StateTransit}
	for i := 0; i+1 < len(rl); i += 2 {
		j.ResourceList = j.ResourceList.Set(rl[i], rl[i+1])
	}
	return j
}

// What an execution queue refuses, each in its own words and code; the
// job given is never changed.
func TestEnqueueRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		attr, res, value  string
		job               *model.Job
		routed            bool
		code              proto.Code
		text              string
		queuedBefore, old int
	}{
		{name: "disabled", attr: proto.AttrEnabled, value: "False", code: proto.PBSE_QUNOENB},
		{name: "from route only", attr: proto.AttrFromRouteOnly, value: "True", code: proto.PBSE_QACESS, text: "only from route queues"},
		{name: "max_queuable", attr: proto.AttrMaxQueuable, value: "1", queuedBefore: 1, code: proto.PBSE_MAXQUED},
		{name: "max_user_queuable", attr: proto.AttrMaxUserQueuable, value: "1", queuedBefore: 1, code: proto.PBSE_MAXQUED, text: "for user u already in queue workq"},
		{name: "acl_hosts", attr: proto.AttrAclHosts, value: "other.example", code: proto.PBSE_BADHOST},
		{name: "acl_users", attr: proto.AttrAclUsers, value: "someone", code: proto.PBSE_PERM, text: "acl_users"},
		{name: "acl_groups", attr: proto.AttrAclGroups, value: "wheel", code: proto.PBSE_PERM, text: "acl_groups"},
		{name: "resources_max", attr: proto.AttrResourcesMax, res: "ncpus", value: "2", job: submitted(9, "u", "ncpus", "4"), code: proto.PBSE_EXCQRESC, text: "resources_max.ncpus = 2"},
		{name: "resources_min", attr: proto.AttrResourcesMin, res: "mem", value: "1gb", job: submitted(9, "u", "mem", "10mb"), code: proto.PBSE_EXCQRESC, text: "resources_min.mem"},
		{name: "max_queued per user", attr: proto.AttrMaxQueued, value: "[u:PBS_GENERIC=1]", queuedBefore: 1, code: proto.PBSE_ENTLIMCT, text: "would exceed queue generic's per-user limit"},
		{name: "max_queued_res per user", attr: proto.AttrMaxQueuedRes, res: "ncpus", value: "[u:u=3]", queuedBefore: 1, job: submitted(9, "u", "ncpus", "2"), code: proto.PBSE_ENTLIMRESC, text: "would exceed user u's limit on resource ncpus in queue workq"},
	} {
		v := view(t)
		for _, acl := range []string{proto.AttrAclHosts, proto.AttrAclUsers, proto.AttrAclGroups} {
			if tc.attr == acl {
				v.set("workq", acl[:len(acl)-1]+"_enable", "", "True")
			}
		}
		q := v.set("workq", tc.attr, tc.res, tc.value)
		for i := 0; i < tc.queuedBefore; i++ {
			o := submitted(int64(i+1), "u", "ncpus", "2")
			o.CacheRequest(v.Table)
			o.Enqueue("workq", "Execution", 1)
			v.Jobs.Insert(o)
		}
		j := tc.job
		if j == nil {
			j = submitted(9, "u")
		}
		j.CacheRequest(v.Table)
		before := *j
		_, err := v.Enqueue(j, q, Caller{Groups: []string{"g"}}, tc.routed, 1)
		if proto.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v, want code %d with %q", tc.name, err, tc.code, tc.text)
		}
		if j.Queue != before.Queue || len(j.ResourceList) != len(before.ResourceList) {
			t.Errorf("%s: the job given changed: %+v", tc.name, j)
		}
	}
}

// An admitted job gets the queue's and the server's defaults, a select
// derived from its resources with default_chunk in every chunk and the
// totals, a place, and the queue; through a route queue it lands in the
// destination, or waits in the route queue when none takes it for now.
func TestEnqueueAdmits(t *testing.T) {
	t.Parallel()
	v := view(t)
	v.set("workq", proto.AttrResourcesDefault, "walltime", "01:00:00")
	q := v.set("workq", proto.AttrDefaultChunk, "mem", "1gb")
	v.Server.Set(proto.AttrResourcesDefault, "ncpus", "2")
	j := submitted(1, "u")
	got, err := v.Enqueue(j, q, Caller{}, false, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"walltime": "01:00:00", "ncpus": "2", "select": "1:ncpus=2:mem=1gb", "mem": "1gb", "nodect": "1", "place": "pack"}
	for name, val := range want {
		if got, _ := got.ResourceList.Get(name); got != val {
			t.Errorf("Resource_List.%s = %q, want %q", name, got, val)
		}
	}
	if got.Queue != "workq" || got.State != model.StateQueued || j.Queue != "" {
		t.Errorf("admitted into %q state %c; the job given is in %q", got.Queue, got.State, j.Queue)
	}
	// nodes= becomes a select, placed scatter.
	n, err := v.NormalResources(model.Resources{}.Set("nodes", "2:ppn=4"), nil)
	if sel, _ := n.Get("select"); err != nil || !strings.HasPrefix(sel, "2:ncpus=4") {
		t.Errorf("nodes=2:ppn=4 normalised: %v, %v", n, err)
	}
	if p, _ := n.Get("place"); p != "scatter" {
		t.Errorf("nodes= placed %q", p)
	}
	// A select and a chunk resource beside it: refused.
	if _, err := v.NormalResources(model.Resources{}.Set("select", "1:ncpus=1").Set("mem", "1gb"), nil); proto.CodeOf(err) != proto.PBSE_INVALJOBRESC {
		t.Errorf("select with mem beside it: %v", err)
	}

	rq, _ := v.Queues.Get("routeq")
	got, err = v.Enqueue(submitted(2, "u"), rq, Caller{}, false, 5)
	if err != nil || got.Queue != "workq" {
		t.Fatalf("through routeq: %v, in %q", err, got.Queue)
	}
	v.set("workq", proto.AttrEnabled, "", "False") // refused for now: waits in the route queue
	got, err = v.Enqueue(submitted(3, "u"), rq, Caller{}, false, 5)
	if err != nil || got.Queue != "routeq" || got.QueueType != "Route" {
		t.Fatalf("destination disabled: %v, in %q", err, got.Queue)
	}
	v.set("workq", proto.AttrEnabled, "", "True")
	v.set("workq", proto.AttrResourcesMax, "ncpus", "1") // refused for good: the submission fails
	if _, err := v.Enqueue(submitted(4, "u", "ncpus", "2"), rq, Caller{}, false, 5); proto.CodeOf(err) != proto.PBSE_ROUTEREJ {
		t.Errorf("every destination refusing for good: %v", err)
	}
}

func TestRoutable(t *testing.T) {
	t.Parallel()
	v := view(t)
	q, _ := v.Queues.Get("routeq")
	held := submitted(1, "u")
	held.Holds = "u"
	waiting := submitted(2, "u")
	waiting.ExecutionTime = 100
	if v.Routable(held, q, 50) || v.Routable(waiting, q, 50) || !v.Routable(waiting, q, 100) || !v.Routable(submitted(3, "u"), q, 50) {
		t.Error("held or waiting jobs routed, or a free one not")
	}
	q = v.set("routeq", proto.AttrRouteHeldJobs, "", "True")
	q = v.set("routeq", proto.AttrRouteWaitingJobs, "", "True")
	if !v.Routable(held, q, 50) || !v.Routable(waiting, q, 50) {
		t.Error("route_held_jobs and route_waiting_jobs not honoured")
	}
}

// Old-style limits and entity limits are not mixed, on the server or on
// any queue.
func TestCheckLimitStyles(t *testing.T) {
	t.Parallel()
	v := view(t)
	if err := v.CheckLimitStyles([]proto.Attr{{Name: proto.AttrMaxRun, Value: "[u:PBS_GENERIC=2]"}}); err != nil {
		t.Fatal(err)
	}
	v.set("workq", proto.AttrMaxUserRun, "", "2")
	err := v.CheckLimitStyles([]proto.Attr{{Name: proto.AttrMaxRun, Value: "[u:PBS_GENERIC=2]"}})
	if proto.CodeOf(err) != proto.PBSE_MIXENTLIMS || !strings.Contains(err.Error(), "queue workq has max_user_run") {
		t.Errorf("entity limit beside max_user_run: %v", err)
	}
	v.Server.Set(proto.AttrMaxQueuedRes, "ncpus", "[o:PBS_ALL=4]")
	if err := v.CheckLimitStyles([]proto.Attr{{Name: proto.AttrMaxUserQueuable, Value: "3"}}); proto.CodeOf(err) != proto.PBSE_MIXENTLIMS || !strings.Contains(err.Error(), "the server") {
		t.Errorf("max_user_queuable beside the server's max_queued_res: %v", err)
	}
	if err := v.CheckLimitStyles([]proto.Attr{{Name: proto.AttrComment, Value: "x"}}); err != nil {
		t.Errorf("no limit at all: %v", err)
	}
}

// A growth is checked as a start would be: the queue's and the server's
// resources_max, and max_user_res and max_group_res counting what the
// owner's and the group's other running jobs hold (a job the scheduler
// suspended holds nothing).
func TestCheckGrowth(t *testing.T) {
	t.Parallel()
	v := view(t)
	runningJob := func(seq int64, user, sel, vnode string) *model.Job {
		j := submitted(seq, user, "select", sel)
		j.Enqueue("workq", "Execution", 1)
		j.CacheRequest(v.Table)
		j.Start(model.SubRunning, 2)
		j.Alloc = resc.ParseAlloc("", vnode)
		j.CacheRequest(v.Table)
		v.Jobs.Insert(j)
		return j
	}
	other := runningJob(1, "u", "2:ncpus=2", "(n1:ncpus=2)+(n2:ncpus=2)")
	elastic := runningJob(2, "u", "1-4:ncpus=1", "(n3:ncpus=1)")
	grow := func(n int) resc.Select {
		r, _ := elastic.Request()
		sel, _ := r.Select.WithNodeCount(n)
		return sel
	}
	if err := v.CheckGrowth(elastic, grow(3)); err != nil {
		t.Fatalf("no limits: %v", err)
	}
	v.Server.Set(proto.AttrMaxUserRes, "ncpus", "6")
	if err := v.CheckGrowth(elastic, grow(2)); err != nil {
		t.Errorf("to 2 cpus beside the other job's 4, limit 6: %v", err)
	}
	err := v.CheckGrowth(elastic, grow(3))
	if proto.CodeOf(err) != proto.PBSE_EXCQRESC || !strings.Contains(err.Error(), "user u would hold 7 of ncpus, over the server's max_user_res.ncpus = 6") {
		t.Errorf("to 3 cpus beside 4, limit 6: %v", err)
	}
	other.Suspended, other.Substate = true, model.SubSchedSusp
	if err := v.CheckGrowth(elastic, grow(3)); err != nil {
		t.Errorf("the other job suspended by the scheduler: %v", err)
	}
	v.set("workq", proto.AttrResourcesMax, "ncpus", "2")
	if err := v.CheckGrowth(elastic, grow(3)); proto.CodeOf(err) != proto.PBSE_EXCQRESC {
		t.Errorf("over the queue's resources_max: %v", err)
	}
}
