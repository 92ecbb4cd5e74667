package server

import (
	"errors"
	"strconv"
	"time"

	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// newTestServer runs a server in-process on a Unix socket in a temp dir.
func newTestServer(t *testing.T, opts store.Options) (*Server, *proto.Client) {
	t.Helper()
	dir, err := os.MkdirTemp("", "srvt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return newTestServerAt(t, dir, func(cfg *Config) { cfg.Store = opts })
}

// newTestServerAt runs a server in dir; adjust may change its config.
func newTestServerAt(t *testing.T, dir string, adjust func(*Config)) (*Server, *proto.Client) {
	t.Helper()
	var logger hclog.Logger
	if os.Getenv("GOPBS_TEST_LOG") != "" {
		logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Debug})
	}
	cfg := Config{
		Logger:        logger,
		Home:          dir,
		ServerName:    "srv",
		Host:          "host",
		SocketPath:    filepath.Join(dir, "s.sock"),
		StorePath:     filepath.Join(dir, "server_priv"),
		AccountingDir: filepath.Join(dir, "server_priv", "accounting"),
	}
	adjust(&cfg)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(dir, "s.sock")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Tests run as root; let root's jobs in.
	if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjServer, Attrs: []proto.Attr{{Name: proto.AttrAclRoots, Value: "root@*"}}}); err != nil {
		t.Fatal(err)
	}
	return s, c
}

func submit(c *proto.Client, attrs ...proto.Attr) (string, error) {
	return c.Submit(&proto.SubmitRequest{Script: []byte("#!/bin/sh\n"), Attrs: attrs})
}

// A failing store acknowledges nothing, tells the client, and leaves the
// server consistent and usable once the disk recovers.
func TestRootJobsNeedAclRoots(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("submits as root")
	}
	_, c := newTestServer(t, store.Options{})
	if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrUnset, Object: proto.ObjServer, Attrs: []proto.Attr{{Name: proto.AttrAclRoots}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := submit(c); proto.CodeOf(err) != proto.PBSE_BADUSER || !strings.Contains(err.Error(), "acl_roots") {
		t.Fatalf("root job without acl_roots: %v", err)
	}
}

func TestStorageErrorAcknowledgesNothing(t *testing.T) {
	t.Parallel()
	var failing atomic.Bool
	_, c := newTestServer(t, store.Options{BeforeCommit: func() error {
		if failing.Load() {
			return errors.New("no space left on device")
		}
		return nil
	}})
	first, err := submit(c)
	if err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	_, err = submit(c)
	if proto.CodeOf(err) != proto.PBSE_SAVE_ERR || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("submit on a failing store: %v", err)
	}
	if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjQueue, Name: "q2"}); proto.CodeOf(err) != proto.PBSE_SAVE_ERR {
		t.Fatalf("qmgr on a failing store: %v", err)
	}
	failing.Store(false)
	jobs, _, err := c.StatusJobs(&proto.StatusRequest{})
	if err != nil || len(jobs) != 1 || jobs[0].Name != first {
		t.Fatalf("after the failure the server shows %v (%v), want only %s", jobs, err, first)
	}
	queues, _, _ := c.StatusQueues(&proto.StatusRequest{})
	if len(queues) != 1 {
		t.Fatalf("queue of the failed commit is visible: %v", queues)
	}
	second, err := submit(c)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || second == "1.srv" {
		t.Fatalf("id %s after a failed commit: ids must not repeat or reuse the failed one's", second)
	}
}

func TestQueueEnforcementAtSubmit(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	mgr := func(cmd proto.ManagerCommand, obj proto.ObjectType, name string, attrs ...proto.Attr) {
		t.Helper()
		if err := c.Manager(&proto.ManagerRequest{Command: cmd, Object: obj, Name: name, Attrs: attrs}); err != nil {
			t.Fatalf("manager %s: %v", name, err)
		}
	}
	set := func(name, value string) proto.Attr { return proto.Attr{Name: name, Value: value} }
	res := func(name, r, value string) proto.Attr { return proto.Attr{Name: name, Resource: r, Value: value} }
	mgr(proto.MgrCreate, proto.ObjQueue, "small", set("queue_type", "e"), set("enabled", "t"), set("started", "t"),
		res("resources_max", "ncpus", "4"), res("resources_min", "walltime", "00:01:00"), res("resources_default", "walltime", "00:30:00"),
		set("max_queuable", "2"))
	mgr(proto.MgrCreate, proto.ObjQueue, "off", set("queue_type", "e"))
	mgr(proto.MgrCreate, proto.ObjQueue, "acl", set("queue_type", "e"), set("enabled", "t"), set("acl_user_enable", "t"), set("acl_users", "nobody-else"))
	mgr(proto.MgrCreate, proto.ObjQueue, "r", set("queue_type", "route"), set("route_destinations", "off,small"), set("enabled", "t"), set("started", "t"))

	q := func(queue string, attrs ...proto.Attr) (string, error) {
		return c.Submit(&proto.SubmitRequest{Queue: queue, Script: []byte("#!/bin/sh\n"), Attrs: attrs})
	}
	tests := []struct {
		name  string
		queue string
		attrs []proto.Attr
		code  proto.Code
		text  string
	}{
		{"unknown queue", "nope", nil, proto.PBSE_UNKQUE, "nope"},
		{"disabled", "off", nil, proto.PBSE_QUNOENB, ""},
		{"too many cpus", "small", []proto.Attr{res("Resource_List", "ncpus", "8")}, proto.PBSE_EXCQRESC, "ncpus"},
		{"select over max", "small", []proto.Attr{res("Resource_List", "select", "3:ncpus=2")}, proto.PBSE_EXCQRESC, "ncpus"},
		{"too short", "small", []proto.Attr{res("Resource_List", "walltime", "30")}, proto.PBSE_EXCQRESC, "walltime"},
		{"acl", "acl", nil, proto.PBSE_PERM, "acl_users"},
		{"select and ncpus", "small", []proto.Attr{res("Resource_List", "select", "1:ncpus=1"), res("Resource_List", "ncpus", "1")}, proto.PBSE_INVALJOBRESC, "ncpus"},
		{"fits", "small", []proto.Attr{res("Resource_List", "select", "2:ncpus=2")}, 0, ""},
		{"routed past a disabled queue", "r", nil, 0, ""},
		{"queue full", "small", nil, proto.PBSE_MAXQUED, ""},
	}
	for _, tt := range tests {
		id, err := q(tt.queue, tt.attrs...)
		if proto.CodeOf(err) != tt.code || (err != nil && !strings.Contains(err.Error(), tt.text)) {
			t.Errorf("%s: got %q, %v; want code %d mentioning %q", tt.name, id, err, tt.code, tt.text)
		}
	}
	jobs, _, _ := c.StatusJobs(&proto.StatusRequest{IDs: []string{"small"}})
	if len(jobs) != 2 {
		t.Fatalf("queue small holds %d jobs, want 2", len(jobs))
	}
	wall, _ := jobs[1].Get("Resource_List.walltime")
	queue, _ := jobs[1].Get("queue")
	if wall != "00:30:00" || queue != "small" {
		t.Errorf("routed job: queue %q walltime %q; want small with the queue's default 00:30:00", queue, wall)
	}
	ncpus, _ := jobs[0].Get("Resource_List.ncpus")
	nodect, _ := jobs[0].Get("Resource_List.nodect")
	if ncpus != "4" || nodect != "2" {
		t.Errorf("select=2:ncpus=2 gives ncpus %q nodect %q, want 4 and 2", ncpus, nodect)
	}
}

func TestHoldReleaseAndWait(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	id, err := submit(c, proto.Attr{Name: "Hold_Types", Value: "u"})
	if err != nil {
		t.Fatal(err)
	}
	state := func() string {
		jobs, _, _ := c.StatusJobs(&proto.StatusRequest{IDs: []string{id}})
		if len(jobs) != 1 {
			return "?"
		}
		v, _ := jobs[0].Get("job_state")
		return v
	}
	if s := state(); s != "H" {
		t.Fatalf("qsub -h: state %s", s)
	}
	if err := c.HoldJob(id, "o"); err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseJob(id, "u"); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != "H" {
		t.Fatalf("still held by o: state %s", s)
	}
	if err := c.ReleaseJob(id, "o"); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != "Q" {
		t.Fatalf("all holds released: state %s", s)
	}
	if err := c.AlterJob(id, []proto.Attr{{Name: "Execution_Time", Value: "4102444800"}}); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != "W" {
		t.Fatalf("Execution_Time in the future: state %s", s)
	}
	if err := c.AlterJob(id, []proto.Attr{{Name: "Execution_Time", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != "Q" {
		t.Fatalf("Execution_Time in the past: state %s", s)
	}
	if err := c.DeleteJob(id, proto.DeleteOptions{KillDelay: proto.NoKillDelay}); err != nil {
		t.Fatal(err)
	}
	if err := c.HoldJob(id, "u"); proto.CodeOf(err) != proto.PBSE_HISTJOBID {
		t.Fatalf("hold of a finished job: %v", err)
	}
	jobs, _, _ := c.StatusJobs(&proto.StatusRequest{IDs: []string{id}, History: true})
	if len(jobs) != 1 {
		t.Fatal("deleted job not in history")
	}
	if v, _ := jobs[0].Get("job_state"); v != "F" {
		t.Fatalf("deleted job state %s", v)
	}
	if v, ok := jobs[0].Get("Exit_status"); !ok || v != "271" {
		t.Fatalf("deleted job Exit_status %q", v)
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	a, _ := submit(c, proto.Attr{Name: "Job_Name", Value: "alpha"}, proto.Attr{Name: "Resource_List", Resource: "ncpus", Value: "4"})
	b, _ := submit(c, proto.Attr{Name: "Job_Name", Value: "beta"}, proto.Attr{Name: "Hold_Types", Value: "u"})
	tests := []struct {
		name     string
		criteria []proto.Attr
		want     []string
	}{
		{"all", nil, []string{a, b}},
		{"by name", []proto.Attr{{Name: "Job_Name", Value: "beta", Op: proto.OpEQ}}, []string{b}},
		{"by state", []proto.Attr{{Name: "job_state", Value: "H", Op: proto.OpEQ}}, []string{b}},
		{"ncpus gt", []proto.Attr{{Name: "Resource_List", Resource: "ncpus", Value: "2", Op: proto.OpGT}}, []string{a}},
		{"owner", []proto.Attr{{Name: "Job_Owner", Value: "nobody-at-all", Op: proto.OpEQ}}, nil},
	}
	for _, tt := range tests {
		got, err := c.SelectJobs(&proto.SelectRequest{Criteria: tt.criteria})
		if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	// A queue is named by qselect -q; the whole server (@srv) is not one.
	if got, err := c.SelectJobs(&proto.SelectRequest{Criteria: []proto.Attr{{Name: "queue", Value: "@srv", Op: proto.OpEQ}}}); err != nil || len(got) != 2 {
		t.Errorf("queue @srv: %v, %v", got, err)
	}
	if _, err := c.SelectJobs(&proto.SelectRequest{Criteria: []proto.Attr{{Name: "queue", Value: "nosuch", Op: proto.OpEQ}}}); proto.CodeOf(err) != proto.PBSE_UNKQUE {
		t.Errorf("an unknown queue: %v, want PBSE_UNKQUE", err)
	}
}

// Node status lists attributes in NodeDefs order, manager settings
// included, so qmgr list and pbsnodes print them in a stable order.
func TestNodeStatusOrder(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	err := c.Manager(&proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjNode, Name: "n1", Attrs: []proto.Attr{
		{Name: "Mom", Value: "h1"}, {Name: "comment", Value: "note"}, {Name: "max_load", Value: "4"},
		{Name: "resources_available", Resource: "ncpus", Value: "8"}, {Name: "properties", Value: "big"}}})
	if err != nil {
		t.Fatal(err)
	}
	nodes, _, err := c.StatusNodes(&proto.StatusRequest{})
	if err != nil || len(nodes) != 1 {
		t.Fatal(err)
	}
	last := -1
	seen := map[string]bool{}
	for _, a := range nodes[0].Attrs {
		seen[a.Name] = true
		i := -1
		for k, d := range model.NodeDefs.Defs {
			if d.Name == a.Name {
				i = k
			}
		}
		if i < last {
			t.Errorf("%s out of order in %v", a.Name, nodes[0].Attrs)
		}
		last = i
	}
	for _, name := range []string{"Mom", "Port", "state", "resources_available", "resources_assigned", "comment", "max_load", "properties", "ntype", "sharing"} {
		if !seen[name] {
			t.Errorf("node status lacks %s: %v", name, nodes[0].Attrs)
		}
	}
	if v, _ := nodes[0].Get("state"); v != "state-unknown,down" {
		t.Errorf("state of a node never reported: %q", v)
	}
}

// A system hold with hold_until is lifted when that time passes.
func TestHoldUntil(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	id, err := submit(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.HoldJob(id, "s"); err != nil {
		t.Fatal(err)
	}
	if err := c.AlterJob(id, []proto.Attr{{Name: "hold_until", Value: strconv.FormatInt(time.Now().Unix()+1, 10)}}); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		jobs, _, _ := c.StatusJobs(&proto.StatusRequest{IDs: []string{id}})
		v, _ := jobs[0].Get("job_state")
		return v
	}
	if s := state(); s != "H" {
		t.Fatalf("held job state %s", s)
	}
	testcluster.WaitFor(t, "hold lifted after hold_until", 5*time.Second, func() (bool, string) {
		s := state()
		return s == "Q", s
	})
}

// The lease a mom gets always lapses before the server may requeue its
// jobs (node down after downAfter, requeue failAfter later), by a margin
// that covers the shepherds' once-a-second look.
func TestLeaseFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		down, fail, want time.Duration
	}{
		{60 * time.Second, 310 * time.Second, 340 * time.Second}, // defaults: margin capped at 30 s
		{3 * time.Second, 2 * time.Second, 2 * time.Second},      // margin at least 3 s
		{10 * time.Second, 90 * time.Second, 90 * time.Second},   // a tenth
		{3 * time.Second, 0, 0},                                  // never requeued: no lease
		{1 * time.Second, 1 * time.Second, time.Second},          // never below a second
	} {
		got := leaseFor(tc.down, tc.fail)
		if got != tc.want {
			t.Errorf("leaseFor(%v, %v) = %v, want %v", tc.down, tc.fail, got, tc.want)
		}
		if got > 0 && got+fenceSlack > tc.down+tc.fail && tc.down+tc.fail > 3*time.Second {
			t.Errorf("leaseFor(%v, %v) = %v leaves no margin", tc.down, tc.fail, got)
		}
	}
	rt := &state.Runtime{Told: 20 * time.Second}
	if got := downAfter(3*time.Second, rt); got != 60*time.Second {
		t.Errorf("downAfter with a lowered rate = %v, want three told intervals", got)
	}
}

// hold_until alone holds a queued job until then, with a comment saying
// so; the server lifts it then.
func TestHoldUntilAlone(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	id, err := submit(c)
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Unix() + 2
	if err := c.AlterJob(id, []proto.Attr{{Name: proto.AttrHoldUntil, Value: strconv.FormatInt(until, 10)}}); err != nil {
		t.Fatal(err)
	}
	get := func(name string) string {
		jobs, _, _ := c.StatusJobs(&proto.StatusRequest{IDs: []string{id}})
		v, _ := jobs[0].Get(name)
		return v
	}
	if s, cm := get("job_state"), get("comment"); s != "H" || !strings.HasPrefix(cm, "Not Running: held until ") || !strings.HasSuffix(cm, "(hold_until)") {
		t.Fatalf("state %s comment %q", s, cm)
	}
	testcluster.WaitFor(t, "hold_until lifted", 6*time.Second, func() (bool, string) {
		s := get("job_state")
		return s == "Q", s
	})
	if v := get("hold_until"); v != "" {
		t.Errorf("hold_until %q after it passed", v)
	}
}
