package qmgr

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/qmgrparse"
	"github.com/gopbs/gopbs/proto"
)

// fake is a server holding a fixed configuration. It records manager
// requests and fails those naming an object in fail.
type fake struct {
	server    proto.Status
	queues    []proto.Status
	nodes     []proto.Status
	resources []proto.Status
	fail      map[string]error
	requests  []proto.ManagerRequest
	statuses  []string
	closed    bool
	scheds    []proto.Status
	hooks     []proto.Status
}

func newFake() *fake {
	return &fake{
		server: proto.Status{Name: "svr1", Attrs: []proto.Attr{
			{Name: "server_state", Value: "Active"},
			{Name: "scheduling", Value: "True"},
			{Name: "managers", Value: "root@h,admin@h"},
			{Name: "default_queue", Value: "workq"},
		}},
		queues: []proto.Status{
			{Name: "workq", Attrs: []proto.Attr{
				{Name: "queue_type", Value: "Execution"},
				{Name: "total_jobs", Value: "0"},
				{Name: "max_running", Value: "10"},
				{Name: "enabled", Value: "True"},
			}},
			{Name: "batch", Attrs: []proto.Attr{{Name: "queue_type", Value: "Execution"}}},
		},
		nodes: []proto.Status{
			{Name: "n1", Attrs: []proto.Attr{
				{Name: "Mom", Value: "n1"},
				{Name: "state", Value: "offline"},
				{Name: "last_state_change_time", Value: "1704067200"},
				{Name: "resources_available", Resource: "ncpus", Value: "4"},
			}},
		},
		scheds: []proto.Status{{Name: "default", Attrs: []proto.Attr{
			{Name: "sched_host", Value: "h"},
			{Name: "scheduling", Value: "True"},
			{Name: "scheduler_iteration", Value: "600"},
			{Name: "state", Value: "idle"},
		}}},
		fail: map[string]error{},
	}
}

func (f *fake) Manager(req *proto.ManagerRequest) error {
	f.requests = append(f.requests, *req)
	if err := f.fail[req.Name]; err != nil {
		return err
	}
	return nil
}

func (f *fake) StatusServer(attrs []string) (proto.Status, error) {
	f.statuses = append(f.statuses, "server")
	if err := f.fail["status server"]; err != nil {
		return proto.Status{}, err
	}
	return filter(f.server, attrs), nil
}

func (f *fake) StatusQueues(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	return f.status("queue", f.queues, req, proto.PBSE_UNKQUE)
}

func (f *fake) StatusNodes(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	return f.status("node", f.nodes, req, proto.PBSE_UNKNODE)
}

func (f *fake) StatusResources(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	return f.status("resource", f.resources, req, proto.PBSE_UNKRESC)
}

func (f *fake) StatusSched(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	return f.status("sched", f.scheds, req, proto.PBSE_UNKSCHED)
}

// StatusHooks is as the server's: the content alone asks for every
// attribute and the content.
func (f *fake) StatusHooks(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	r := *req
	if len(r.Attrs) == 1 && r.Attrs[0] == proto.AttrHookContent {
		r.Attrs = nil
	}
	return f.status("hook", f.hooks, &r, proto.PBSE_IVAL_OBJ_NAME)
}

func (f *fake) status(kind string, all []proto.Status, req *proto.StatusRequest, unknown proto.Code) ([]proto.Status, []proto.ObjectError, error) {
	f.statuses = append(f.statuses, kind+" "+strings.Join(req.IDs, ","))
	if err := f.fail["status "+kind]; err != nil {
		return nil, nil, err
	}
	if len(req.IDs) == 0 {
		var out []proto.Status
		for _, o := range all {
			out = append(out, filter(o, req.Attrs))
		}
		return out, nil, nil
	}
	var out []proto.Status
	for _, id := range req.IDs {
		found := false
		for _, o := range all {
			if o.Name == id {
				out = append(out, filter(o, req.Attrs))
				found = true
			}
		}
		if !found {
			return nil, nil, proto.NewError(unknown)
		}
	}
	return out, nil, nil
}

func (f *fake) Close() error { f.closed = true; return nil }

func filter(o proto.Status, attrs []string) proto.Status {
	if attrs == nil {
		return o
	}
	out := proto.Status{Name: o.Name}
	for _, a := range o.Attrs {
		for _, want := range attrs {
			if a.FullName() == want || a.Name == want {
				out.Attrs = append(out.Attrs, a)
			}
		}
	}
	return out
}

type result struct {
	code           int
	stdout, stderr string
}

func runFake(t *testing.T, f *fake, personality config.Personality, stdin string, interactive bool, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qmgr", Config: &config.Config{Server: "svrhost", Personality: personality},
		Stdout: &out, Stderr: &errb}
	connect := func() (server, error) {
		if f == nil {
			t.Fatal("qmgr connected although it should not")
		}
		return f, nil
	}
	code := runWith(env, args, strings.NewReader(stdin), deps{connect: connect, interactive: interactive, loc: time.UTC})
	if f != nil && !f.closed && code != exitConnect {
		t.Error("connection not closed")
	}
	return result{code, out.String(), errb.String()}
}

func run1(t *testing.T, f *fake, args ...string) result {
	t.Helper()
	return runFake(t, f, config.PBSPro, "", false, args...)
}

func TestSetServer(t *testing.T) {
	t.Parallel()
	f := newFake()
	r := run1(t, f, "-c", "s s scheduling=false, managers += x@y")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("got %+v", r)
	}
	want := []proto.ManagerRequest{{Command: proto.MgrSet, Object: proto.ObjServer, Name: "", Attrs: []proto.Attr{
		{Name: "scheduling", Value: "false", Op: proto.OpSet},
		{Name: "managers", Value: "x@y", Op: proto.OpIncr},
	}}}
	if !reflect.DeepEqual(f.requests, want) {
		t.Errorf("requests %+v, want %+v", f.requests, want)
	}
}

func TestOneRequestPerName(t *testing.T) {
	t.Parallel()
	f := newFake()
	r := run1(t, f, "-c", "create queue a,b queue_type=e; unset node n1 comment; delete queue a")
	if r.code != 0 {
		t.Fatalf("got %+v", r)
	}
	want := []proto.ManagerRequest{
		{Command: proto.MgrCreate, Object: proto.ObjQueue, Name: "a", Attrs: []proto.Attr{{Name: "queue_type", Value: "e"}}},
		{Command: proto.MgrCreate, Object: proto.ObjQueue, Name: "b", Attrs: []proto.Attr{{Name: "queue_type", Value: "e"}}},
		{Command: proto.MgrUnset, Object: proto.ObjNode, Name: "n1", Attrs: []proto.Attr{{Name: "comment", Op: proto.OpUnset}}},
		{Command: proto.MgrDelete, Object: proto.ObjQueue, Name: "a"},
	}
	if !reflect.DeepEqual(f.requests, want) {
		t.Errorf("requests\n%+v\nwant\n%+v", f.requests, want)
	}
}

func TestServerError(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.fail["foo"] = proto.NewError(proto.PBSE_UNKQUE)
	r := run1(t, f, "-c", "set queue foo enabled=true")
	want := "qmgr obj=foo svr=default: Unknown queue\nqmgr: Error (15018) returned from server\n"
	if r.code != exitExec || r.stderr != want {
		t.Errorf("got %+v, want stderr %q", r, want)
	}

	// Torque prints only the first line; a named server replaces
	// "default"; server objects are labelled by the name they were given.
	f = newFake()
	f.fail[""] = proto.Errorf(proto.PBSE_PERM, "")
	r = runFake(t, f, config.Torque, "", false, "-c", "s s scheduling=true", "svrA")
	want = "qmgr obj=svrA svr=svrA: Unauthorized Request\n"
	if r.code != exitExec || r.stderr != want {
		t.Errorf("got %+v, want stderr %q", r, want)
	}
	r = runFake(t, f, config.Torque, "", false, "-c", "s q foo@other enabled=true")
	if r.code != 0 {
		t.Errorf("got %+v", r)
	}
	f.fail["foo"] = proto.NewError(proto.PBSE_UNKQUE)
	r = runFake(t, f, config.Torque, "", false, "-c", "s q foo@other enabled=true")
	if want := "qmgr obj=foo svr=other: Unknown queue\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}

func TestAbortAndExitStatus(t *testing.T) {
	t.Parallel()
	input := "set queue foo enabled=true\nset queue workq enabled=true\n"
	f := newFake()
	f.fail["foo"] = proto.NewError(proto.PBSE_UNKQUE)
	r := runFake(t, f, config.PBSPro, input, false)
	if r.code != exitExec || len(f.requests) != 2 {
		t.Errorf("without -a: code %d, %d requests; want 2, 2", r.code, len(f.requests))
	}

	f = newFake()
	f.fail["foo"] = proto.NewError(proto.PBSE_UNKQUE)
	r = runFake(t, f, config.PBSPro, input, false, "-a")
	if r.code != exitExec || len(f.requests) != 1 {
		t.Errorf("with -a: code %d, %d requests; want 2, 1", r.code, len(f.requests))
	}

	f = newFake()
	r = runFake(t, f, config.PBSPro, "bogus\nset queue workq enabled=true\n", false, "-a")
	if r.code != exitParse || len(f.requests) != 0 {
		t.Errorf("-a after a syntax error: code %d, %d requests; want 1, 0", r.code, len(f.requests))
	}

	// The status is that of the last failure, even when later commands
	// succeed.
	f = newFake()
	r = runFake(t, f, config.PBSPro, "bogus\nlist server\n", false)
	if r.code != exitParse {
		t.Errorf("code %d, want %d", r.code, exitParse)
	}
}

func TestSyntaxErrorOutput(t *testing.T) {
	t.Parallel()
	r := run1(t, newFake(), "-c", "set foo bar")
	want := "qmgr: Illegal object type: foo.\nset foo bar\n    ^\n"
	if r.code != exitParse || r.stderr != want {
		t.Errorf("got %+v, want stderr %q", r, want)
	}
}

func TestNoExecute(t *testing.T) {
	t.Parallel()
	// f is nil: connecting fails the test.
	r := run1(t, nil, "-n", "-c", "set server scheduling=true; active queue q1; list queue")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("got %+v", r)
	}
	r = run1(t, nil, "-n", "-c", "set server")
	if r.code != exitParse || !strings.Contains(r.stderr, "attribute required") {
		t.Errorf("got %+v", r)
	}
}

func TestQuietAndEcho(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.fail["foo"] = proto.NewError(proto.PBSE_UNKQUE)
	r := runFake(t, f, config.PBSPro, "set queue foo enabled=true;bogus\n", false, "-z", "-e")
	if r.code != exitParse || r.stderr != "" {
		t.Errorf("-z: got %+v", r)
	}
	if want := "set queue foo enabled=true\nbogus\n"; r.stdout != want {
		t.Errorf("-e: stdout %q, want %q", r.stdout, want)
	}
}

func TestConnectError(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qmgr", Config: &config.Config{Server: "svrhost"}, Stdout: &out, Stderr: &errb}
	code := runWith(env, []string{"-c", "list server"}, strings.NewReader(""), deps{
		connect: func() (server, error) { return nil, errors.New("no socket") },
	})
	if code != exitConnect || errb.String() != "qmgr: cannot connect to server svrhost (no socket)\n" {
		t.Errorf("code %d stderr %q", code, errb.String())
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	r := run1(t, nil, "-x")
	if r.code != 1 || !strings.Contains(r.stderr, "Usage: qmgr [-a] [-c command] [-e] [-n] [-z] [server]") {
		t.Errorf("got %+v", r)
	}
	r = run1(t, nil, "s1", "s2")
	if r.code != 1 || !strings.Contains(r.stderr, "several servers") {
		t.Errorf("got %+v", r)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	f := newFake()
	r := run1(t, f, "-c", "list queue workq")
	want := "Queue workq\n    queue_type = Execution\n    total_jobs = 0\n    max_running = 10\n    enabled = True\n\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("got %+v, want stdout %q", r, want)
	}
	r = run1(t, f, "-c", "l q workq max_running,enabled")
	want = "Queue workq\n    max_running = 10\n    enabled = True\n\n"
	if r.stdout != want {
		t.Errorf("attribute selection: stdout %q, want %q", r.stdout, want)
	}
	r = run1(t, f, "-c", "l n")
	want = "Node n1\n    Mom = n1\n    state = offline\n    last_state_change_time = Mon Jan  1 00:00:00 2024\n" +
		"    resources_available.ncpus = 4\n\n"
	if r.stdout != want {
		t.Errorf("list node: stdout %q, want %q", r.stdout, want)
	}
	r = run1(t, f, "-c", "l s")
	if !strings.HasPrefix(r.stdout, "Server svr1\n    server_state = Active\n") {
		t.Errorf("list server: %q", r.stdout)
	}
	r = run1(t, f, "-c", "list queue nosuch,workq")
	if r.code != exitExec || r.stderr != "qmgr obj=nosuch svr=default: Unknown queue\nqmgr: Error (15018) returned from server\n" {
		t.Errorf("missing queue: %+v", r)
	}
	if !strings.HasPrefix(r.stdout, "Queue workq\n") {
		t.Errorf("the existing queue is still listed: %q", r.stdout)
	}
}

func TestPrint(t *testing.T) {
	t.Parallel()
	f := newFake()
	r := run1(t, f, "-c", "print server")
	want := qmgrparse.FormatPrintServer(f.server, f.resources, f.queues, f.nodes)
	if r.code != 0 || r.stdout != want {
		t.Errorf("got %+v\nwant stdout\n%s", r, want)
	}
	for _, s := range []string{
		"#\n# Create queues and set their attributes.\n#\n#\n# Create and define queue workq\n#\ncreate queue workq\n",
		"set queue workq max_running = 10\n",
		"#\n# Set server attributes.\n#\nset server scheduling = True\nset server managers = root@h\nset server managers += admin@h\n",
		"#\n# Create and define node n1\n#\ncreate node n1\nset node n1 state = offline\n",
	} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("print server lacks %q", s)
		}
	}
	if strings.Contains(r.stdout, "total_jobs") || strings.Contains(r.stdout, "server_state") {
		t.Errorf("read-only attributes printed:\n%s", r.stdout)
	}

	r = run1(t, f, "-c", "p q batch,workq")
	want = qmgrparse.FormatPrint(proto.ObjQueue, []proto.Status{f.queues[1], f.queues[0]})
	if r.stdout != want {
		t.Errorf("print queue: %q, want %q", r.stdout, want)
	}
	r = run1(t, f, "-c", "p s scheduling")
	if want := "#\n# Set server attributes.\n#\nset server scheduling = True\n"; r.stdout != want {
		t.Errorf("print server attribute: %q, want %q", r.stdout, want)
	}
}

func TestPrintOutputFeedsBack(t *testing.T) {
	t.Parallel()
	f := newFake()
	printed := run1(t, f, "-c", "print server").stdout
	g := newFake()
	r := runFake(t, g, config.PBSPro, printed, false)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("feeding print output back: %+v", r)
	}
	var got []string
	for _, req := range g.requests {
		got = append(got, (&qmgrparse.Command{Verb: verbOf(req.Command), Object: req.Object,
			Names: namesOf(req.Name), Attrs: req.Attrs}).String())
	}
	want := []string{
		"create queue workq", "set queue workq queue_type = Execution", "set queue workq max_running = 10",
		"set queue workq enabled = True", "create queue batch", "set queue batch queue_type = Execution",
		"set server scheduling = True", "set server managers = root@h", "set server managers += admin@h",
		"set server default_queue = workq", "create node n1", "set node n1 state = offline",
		"set node n1 resources_available.ncpus = 4",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n%q\nwant\n%q", got, want)
	}
}

func verbOf(c proto.ManagerCommand) qmgrparse.Verb {
	return map[proto.ManagerCommand]qmgrparse.Verb{
		proto.MgrCreate: qmgrparse.VerbCreate, proto.MgrDelete: qmgrparse.VerbDelete,
		proto.MgrSet: qmgrparse.VerbSet, proto.MgrUnset: qmgrparse.VerbUnset,
	}[c]
}

func namesOf(name string) []qmgrparse.ObjName {
	if name == "" {
		return nil
	}
	return []qmgrparse.ObjName{{Name: name}}
}

func TestActive(t *testing.T) {
	t.Parallel()
	f := newFake()
	r := runFake(t, f, config.PBSPro, "active queue workq,batch\nset queue enabled=false\nactive queue\nactive server\n", false)
	if r.code != 0 {
		t.Fatalf("got %+v", r)
	}
	if len(f.requests) != 2 || f.requests[0].Name != "workq" || f.requests[1].Name != "batch" {
		t.Errorf("requests %+v, want workq then batch", f.requests)
	}
	if want := "Active queues:\nworkq@default\nbatch@default\nActive servers:\ndefault\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}

	f = newFake()
	r = runFake(t, f, config.PBSPro, "active queue workq\nactive queue nosuch\nset queue enabled=false\n", false)
	if r.code != exitActive || r.stderr != "Queue does not exist: nosuch.\n" {
		t.Errorf("got %+v", r)
	}
	if len(f.requests) != 1 || f.requests[0].Name != "workq" {
		t.Errorf("a failed active keeps the previous one: %+v", f.requests)
	}

	r = run1(t, newFake(), "-c", "active node n2")
	if r.code != exitActive || r.stderr != "Node does not exist: n2.\n" {
		t.Errorf("got %+v", r)
	}
}

func TestNothingActive(t *testing.T) {
	t.Parallel()
	f := newFake()
	r := run1(t, f, "-c", "set queue enabled=false")
	if r.code != exitExec || r.stderr != "No Active Queues, nothing done.\n" || len(f.requests) != 0 {
		t.Errorf("got %+v, %d requests", r, len(f.requests))
	}
	r = run1(t, f, "-c", "unset node comment")
	if r.code != exitExec || r.stderr != "No Active Nodes, nothing done.\n" {
		t.Errorf("got %+v", r)
	}
	// list and print without names cover every object.
	r = run1(t, f, "-c", "list queue")
	if r.code != 0 || !strings.Contains(r.stdout, "Queue workq\n") || !strings.Contains(r.stdout, "Queue batch\n") {
		t.Errorf("list queue: %+v", r)
	}
}

func TestStdinInput(t *testing.T) {
	t.Parallel()
	f := newFake()
	input := "# a comment\n" +
		"set server \\\n" +
		"  scheduling = false # trailing comment\n" +
		"\n" +
		"set queue workq max_running=5; set queue batch comment = \"a; b\"\n" +
		"quit\n" +
		"set server scheduling = true\n"
	r := runFake(t, f, config.PBSPro, input, false)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("got %+v", r)
	}
	want := []proto.ManagerRequest{
		{Command: proto.MgrSet, Object: proto.ObjServer, Attrs: []proto.Attr{{Name: "scheduling", Value: "false"}}},
		{Command: proto.MgrSet, Object: proto.ObjQueue, Name: "workq", Attrs: []proto.Attr{{Name: "max_running", Value: "5"}}},
		{Command: proto.MgrSet, Object: proto.ObjQueue, Name: "batch", Attrs: []proto.Attr{{Name: "comment", Value: "a; b"}}},
	}
	if !reflect.DeepEqual(f.requests, want) {
		t.Errorf("requests\n%+v\nwant\n%+v", f.requests, want)
	}
}

func TestPrompts(t *testing.T) {
	t.Parallel()
	r := runFake(t, newFake(), config.PBSPro, "set server \\\nscheduling=true\nhelp quit\n", true)
	want := "Qmgr: Qmgr< Qmgr: " + helpText("quit") + "Qmgr: \n"
	if r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	r = runFake(t, newFake(), config.PBSPro, "list queue batch\n", false)
	if strings.Contains(r.stdout, "Qmgr") {
		t.Errorf("prompt shown without a terminal: %q", r.stdout)
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	r := run1(t, newFake(), "-c", "help")
	if r.code != 0 || !strings.Contains(r.stdout, "Commands") {
		t.Errorf("got %+v", r)
	}
	r = run1(t, newFake(), "-c", "? set")
	if !strings.HasPrefix(r.stdout, "set object") {
		t.Errorf("help set: %q", r.stdout)
	}
	r = run1(t, newFake(), "-c", "help bogus")
	if r.stdout != "No help available on: bogus\n" {
		t.Errorf("help bogus: %q", r.stdout)
	}
}

func TestBrokenConnection(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.fail["workq"] = &proto.Error{Code: proto.PBSE_PROTOCOL, Text: "read reply to Manager: EOF"}
	r := runFake(t, f, config.PBSPro, "set queue workq enabled=false\nset queue batch enabled=false\n", false)
	want := "qmgr obj=workq svr=default: read reply to Manager: EOF\nqmgr: Protocol error, server disconnected\n"
	if r.code != exitExec || r.stderr != want || len(f.requests) != 1 {
		t.Errorf("got %+v with %d requests, want stderr %q and 1 request", r, len(f.requests), want)
	}
}

func TestStatusObjectErrors(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.fail["status server"] = proto.NewError(proto.PBSE_PERM)
	r := run1(t, f, "-c", "print server")
	if r.code != exitExec || !strings.HasPrefix(r.stderr, "qmgr obj= svr=default: Unauthorized Request\n") {
		t.Errorf("got %+v", r)
	}
}

// The sched object: set without a name names the default scheduler to
// the server (as OpenPBS's qmgr sends PBS_DFLT_SCHED_NAME), list shows
// it under "Sched", and print writes set lines without a name for the
// attributes a manager sets.
func TestSched(t *testing.T) {
	t.Parallel()
	f := newFake()
	r := run1(t, f, "-c", "set sched scheduler_iteration = 300; set sched default log_events=2047; create sched other")
	if r.code != 0 {
		t.Fatalf("got %+v", r)
	}
	want := []proto.ManagerRequest{
		{Command: proto.MgrSet, Object: proto.ObjSched, Name: "default", Attrs: []proto.Attr{{Name: "scheduler_iteration", Value: "300"}}},
		{Command: proto.MgrSet, Object: proto.ObjSched, Name: "default", Attrs: []proto.Attr{{Name: "log_events", Value: "2047"}}},
		{Command: proto.MgrCreate, Object: proto.ObjSched, Name: "other"},
	}
	if !reflect.DeepEqual(f.requests, want) {
		t.Errorf("requests\n%+v\nwant\n%+v", f.requests, want)
	}
	r = run1(t, f, "-c", "list sched")
	if want := "Sched default\n    sched_host = h\n    scheduling = True\n    scheduler_iteration = 600\n    state = idle\n\n"; r.code != 0 || r.stdout != want {
		t.Errorf("list sched: %+v, want stdout %q", r, want)
	}
	r = run1(t, f, "-c", "print sched")
	if want := "#\n# Set scheduler attributes.\n#\nset sched scheduling = True\nset sched scheduler_iteration = 600\n"; r.code != 0 || r.stdout != want {
		t.Errorf("print sched: %+v, want stdout %q", r, want)
	}
	r = run1(t, f, "-c", "list sched other")
	if want := "qmgr obj=other svr=default: Unknown Scheduler\nqmgr: Error (15213) returned from server\n"; r.code != exitExec || r.stderr != want {
		t.Errorf("list sched other: %+v, want stderr %q", r, want)
	}
	r = run1(t, f, "-c", "active sched default; active sched")
	if want := "Active schedulers:\ndefault@default\n"; r.code != 0 || r.stdout != want {
		t.Errorf("active sched: %+v, want stdout %q", r, want)
	}
}
