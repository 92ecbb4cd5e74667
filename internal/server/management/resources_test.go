package management

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// tables is a Store over real state tables and a real store in a
// temporary directory, as the server puts them together.
type tables struct {
	mu     sync.Mutex
	st     *store.Store
	commit *store.Committer
	rt     *resc.Table
	t      Tables
	// The sched object, the next job number and the server changes told
	// (ServerStore).
	sched   *model.Object
	nextSeq int64
	changes int
}

func newTables(t *testing.T) *tables {
	t.Helper()
	st, _, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tb := &tables{st: st, sched: model.NewObject(proto.DefaultSched), nextSeq: 10}
	table := func() *resc.Table { return tb.rt }
	tb.t = Tables{Jobs: state.New(state.Config{Table: table, HostNodes: func(n []string) []string { return n }, Now: func() int64 { return 1 }}),
		Resvs: state.NewResvs(table), Queues: state.NewQueues(), Nodes: state.NewNodes(table, time.Unix(1, 0)), Server: model.NewObject("srv"), ServerName: "srv"}
	tb.commit = store.NewCommitter(st, &tb.mu, func(err error) { t.Errorf("rollback: %v", err) })
	t.Cleanup(func() { tb.commit.Close(); st.Close() })
	return tb
}

func (tb *tables) Commit(change func(b *store.Batch) error) error { return tb.commit.Do(change) }
func (tb *tables) Tables() Tables                                 { return tb.t }
func (tb *tables) Resources() *resc.Table                         { return tb.rt }
func (tb *tables) SetResources(t *resc.Table)                     { tb.rt = t }
func (tb *tables) PutServer(c *model.Object)                      { tb.t.Server = c }
func (tb *tables) Sched() *model.Object                           { return tb.sched }
func (tb *tables) PutSched(c *model.Object)                       { tb.sched = c }
func (tb *tables) NextSeq() int64                                 { return tb.nextSeq }
func (tb *tables) SetNextSeq(n int64)                             { tb.nextSeq = n }
func (tb *tables) ServerChanged(_ *store.Batch, was, now *model.Object) {
	if was.Bool(proto.AttrEligibleTimeEnable) != now.Bool(proto.AttrEligibleTimeEnable) {
		tb.changes++
	}
}
func (tb *tables) View(read func()) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	read()
}

func mgrReq(cmd proto.ManagerCommand, name string, attrs ...proto.Attr) *proto.ManagerRequest {
	return &proto.ManagerRequest{Command: cmd, Object: proto.ObjResource, Name: name, Attrs: attrs}
}

func code(err error) proto.Code {
	var pe *proto.Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	if err == nil {
		return proto.PBSE_NONE
	}
	return -1
}

func TestManageResources(t *testing.T) {
	t.Parallel()
	tb := newTables(t)
	h := NewResources(tb)
	typ := func(v string) proto.Attr { return proto.Attr{Name: proto.AttrResourceType, Op: proto.OpSet, Value: v} }
	flag := func(v string) proto.Attr { return proto.Attr{Name: proto.AttrResourceFlag, Op: proto.OpSet, Value: v} }
	steps := []struct {
		name string
		req  *proto.ManagerRequest
		mgr  bool
		want proto.Code
	}{
		{"an operator may not", mgrReq(proto.MgrCreate, "foo"), false, proto.PBSE_PERM},
		{"create", mgrReq(proto.MgrCreate, "foo", typ("long"), flag("nh")), true, proto.PBSE_NONE},
		{"create again", mgrReq(proto.MgrCreate, "foo"), true, proto.PBSE_DUPLIST},
		{"a built-in", mgrReq(proto.MgrCreate, "ncpus"), true, proto.PBSE_DUPLIST},
		{"set an unknown one", mgrReq(proto.MgrSet, "bar", typ("long")), true, proto.PBSE_UNKRESC},
		{"unset", mgrReq(proto.MgrUnset, "foo", typ("")), true, proto.PBSE_IVALREQ},
		{"a bad type", mgrReq(proto.MgrSet, "foo", typ("color")), true, proto.PBSE_BADATVAL},
		{"another attribute", mgrReq(proto.MgrSet, "foo", proto.Attr{Name: "colour", Op: proto.OpSet, Value: "x"}), true, proto.PBSE_NOATTR},
		{"with +=", mgrReq(proto.MgrSet, "foo", proto.Attr{Name: proto.AttrResourceType, Op: proto.OpIncr, Value: "long"}), true, proto.PBSE_IVALREQ},
		{"retype while unused", mgrReq(proto.MgrSet, "foo", typ("size")), true, proto.PBSE_NONE},
		{"create another", mgrReq(proto.MgrCreate, "lic"), true, proto.PBSE_NONE},
	}
	for _, st := range steps {
		if got := code(h.Manage(st.req, st.mgr)); got != st.want {
			t.Fatalf("%s: code %d, want %d", st.name, got, st.want)
		}
	}
	if c, ok := tb.rt.Custom("foo"); !ok || c.Type != resc.TypeSize {
		t.Fatalf("foo in the table: %+v %v", c, ok)
	}
	snap, err := tb.st.Load()
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, c := range snap.Resources {
		stored = append(stored, c.Name)
	}
	if !slices.Equal(stored, []string{"foo", "lic"}) {
		t.Errorf("the store holds %v", stored)
	}

	// Set on a node, foo is in use: neither retyped nor deleted.
	n := model.NewObject("n1")
	n.Set(proto.AttrResourcesAvail, "foo", "1gb")
	tb.t.Nodes.Put(n)
	if err := h.Manage(mgrReq(proto.MgrDelete, "foo"), true); code(err) != proto.PBSE_RESCBUSY || !containsAll(err.Error(), "node n1", "foo") {
		t.Errorf("delete of a resource a node sets: %v", err)
	}
	if err := h.Manage(mgrReq(proto.MgrSet, "foo", typ("long")), true); code(err) != proto.PBSE_RESCBUSY {
		t.Errorf("retype of a resource a node sets: %v", err)
	}
	// So is lic, asked for by a job.
	j := &model.Job{Seq: 1, ID: "1.srv", Owner: "u@h", Queue: "workq", State: model.StateQueued}
	j.ResourceList = j.ResourceList.Set("lic", "2")
	tb.t.Jobs.Insert(j)
	if err := h.Manage(mgrReq(proto.MgrDelete, "lic"), true); code(err) != proto.PBSE_RESCBUSY || !containsAll(err.Error(), "job 1.srv") {
		t.Errorf("delete of a resource a job asks for: %v", err)
	}
	tb.t.Jobs.Remove(j)
	if err := h.Manage(mgrReq(proto.MgrDelete, "lic"), true); err != nil {
		t.Errorf("delete of an unused resource: %v", err)
	}
	if _, ok := tb.rt.Custom("lic"); ok {
		t.Errorf("lic is still in the table")
	}

	// The listing: every custom resource, or the ones named.
	all := h.Status(&proto.StatusRequest{})
	if len(all.Objects) != 1 || all.Objects[0].Name != "foo" {
		t.Fatalf("listing %+v", all.Objects)
	}
	if got := all.Objects[0].Attrs; len(got) != 2 || got[0].Value != "size" || got[1].Value != "hn" {
		t.Errorf("foo listed as %+v", got)
	}
	named := h.Status(&proto.StatusRequest{IDs: []string{"foo@srv", "lic"}, Attrs: []string{proto.AttrResourceType}})
	if len(named.Objects) != 1 || len(named.Objects[0].Attrs) != 1 || len(named.Errors) != 1 || named.Errors[0].Code != proto.PBSE_UNKRESC {
		t.Errorf("named listing %+v", named)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
