package qmgrparse

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
)

func attr(full, value string) proto.Attr {
	name, res := proto.SplitAttrName(full)
	return proto.Attr{Name: name, Resource: res, Value: value}
}

func TestFormatList(t *testing.T) {
	t.Parallel()
	var users []string
	for i := 1; i <= 5; i++ {
		users = append(users, fmt.Sprintf("user%02d@somehost.example.com", i))
	}
	server := proto.Status{Name: "svr1", Attrs: []proto.Attr{
		attr("server_state", "Active"),
		attr("scheduling", "True"),
		attr("managers", "root@host1,admin@host2"),
		attr("resources_default.ncpus", "1"),
		attr("acl_users", strings.Join(users, ",")),
	}}
	got := FormatList(proto.ObjServer, []proto.Status{server}, time.UTC)
	want := `Server svr1
    server_state = Active
    scheduling = True
    managers = root@host1,admin@host2
    resources_default.ncpus = 1
    acl_users = user01@somehost.example.com,user02@somehost.example.com,
                user03@somehost.example.com,user04@somehost.example.com,
                user05@somehost.example.com

`
	if got != want {
		t.Errorf("FormatList server =\n%s\nwant\n%s", got, want)
	}

	queues := []proto.Status{
		{Name: "workq", Attrs: []proto.Attr{attr("queue_type", "Execution"), attr("enabled", "True")}},
		{Name: "empty"},
	}
	got = FormatList(proto.ObjQueue, queues, time.UTC)
	want = "Queue workq\n    queue_type = Execution\n    enabled = True\n\nQueue empty\n\n"
	if got != want {
		t.Errorf("FormatList queues =\n%q\nwant\n%q", got, want)
	}

	nodes := []proto.Status{{Name: "n1", Attrs: []proto.Attr{
		attr("state", "free"),
		attr("last_state_change_time", "1704153600"),
		attr("last_used_time", "unknown"),
		attr("resources_available.ncpus", "4"),
	}}}
	got = FormatList(proto.ObjNode, nodes, time.UTC)
	want = "Node n1\n    state = free\n    last_state_change_time = Tue Jan  2 00:00:00 2024\n" +
		"    last_used_time = unknown\n    resources_available.ncpus = 4\n\n"
	if got != want {
		t.Errorf("FormatList nodes =\n%q\nwant\n%q", got, want)
	}

	if got := FormatList(proto.ObjQueue, nil, time.UTC); got != "" {
		t.Errorf("FormatList of nothing = %q", got)
	}
}

func printFixture() (server proto.Status, queues, nodes []proto.Status) {
	queues = []proto.Status{
		{Name: "workq", Attrs: []proto.Attr{
			attr("queue_type", "Execution"),
			attr("total_jobs", "0"),
			attr("state_count", "Transit:0 Queued:0 Held:0 Waiting:0 Running:0 Exiting:0 Begun:0 "),
			attr("resources_max.ncpus", "8"),
			attr("resources_assigned.ncpus", "0"),
			attr("acl_users", "alice,bob"),
			attr("enabled", "True"),
			attr("started", "True"),
			attr("hasnodes", "True"),
		}},
		{Name: "route", Attrs: []proto.Attr{
			attr("queue_type", "Route"),
			attr("route_destinations", "workq,other@svr2"),
			attr("enabled", "False"),
			attr("comment", `say "hi" to everyone's jobs; #1`),
		}},
	}
	server = proto.Status{Name: "svr1", Attrs: []proto.Attr{
		attr("server_state", "Active"),
		attr("server_host", "svr1.example.com"),
		attr("scheduling", "True"),
		attr("managers", "root@h,admin@*"),
		attr("default_queue", "workq"),
		attr("comment", "Cluster A"),
		attr("total_jobs", "3"),
		attr("pbs_version", "0.1"),
		attr("resources_assigned.ncpus", "2"),
		attr("resources_default.walltime", "01:00:00"),
		attr("next_job_number", "12"),
		attr("server_name", "svr1"),
		attr("license_count", "Avail_Global:0"),
		attr("mtime", "1704067200"),
	}}
	nodes = []proto.Status{
		{Name: "n1", Attrs: []proto.Attr{
			attr("Mom", "n1"),
			attr("Port", "15002"),
			attr("state", "free"),
			attr("jobs", "1.svr1/0"),
			attr("ntype", "PBS"),
			attr("resources_available.ncpus", "4"),
			attr("resources_available.mem", "8gb"),
			attr("resources_assigned.ncpus", "1"),
			attr("comment", "rack 1"),
			attr("last_state_change_time", "1704067200"),
			attr("pbs_version", "0.1"),
			attr("loadave", "0.10"),
		}},
		{Name: "n2", Attrs: []proto.Attr{
			attr("Mom", "n2.example.com"),
			attr("Port", "15003"),
			attr("state", "down,offline"),
			attr("resv_enable", "True"),
			attr("queue", "workq"),
		}},
	}
	return server, queues, nodes
}

func TestFormatPrintServer(t *testing.T) {
	t.Parallel()
	server, queues, nodes := printFixture()
	got := FormatPrintServer(server, nil, queues, nodes)
	want := `#
# Create queues and set their attributes.
#
#
# Create and define queue workq
#
create queue workq
set queue workq queue_type = Execution
set queue workq resources_max.ncpus = 8
set queue workq acl_users = alice
set queue workq acl_users += bob
set queue workq enabled = True
set queue workq started = True
#
# Create and define queue route
#
create queue route
set queue route queue_type = Route
set queue route route_destinations = workq
set queue route route_destinations += other@svr2
set queue route enabled = False
set queue route comment = "say "'"'"hi"'"'" to everyone's jobs; #1"
#
# Set server attributes.
#
set server scheduling = True
set server managers = root@h
set server managers += admin@*
set server default_queue = workq
set server comment = "Cluster A"
set server resources_default.walltime = 01:00:00
#
# Create nodes and set their properties.
#
#
# Create and define node n1
#
create node n1
set node n1 ntype = PBS
set node n1 resources_available.ncpus = 4
set node n1 resources_available.mem = 8gb
set node n1 comment = "rack 1"
#
# Create and define node n2
#
create node n2 Mom=n2.example.com,Port=15003
set node n2 state = offline
set node n2 resv_enable = True
`
	if got != want {
		t.Errorf("FormatPrintServer =\n%s\nwant\n%s", got, want)
	}
}

func TestFormatPrintSections(t *testing.T) {
	t.Parallel()
	server, queues, _ := printFixture()
	if got := FormatPrint(proto.ObjQueue, nil); got != "" {
		t.Errorf("FormatPrint of no queues = %q, want nothing", got)
	}
	got := FormatPrintServer(server, nil, nil, nil)
	if !strings.HasPrefix(got, "#\n# Set server attributes.\n#\nset server scheduling = True\n") {
		t.Errorf("server without queues or nodes starts\n%s", got)
	}
	got = FormatPrint(proto.ObjQueue, queues[:1])
	if !strings.HasPrefix(got, "#\n# Create queues and set their attributes.\n#\n#\n# Create and define queue workq\n#\ncreate queue workq\n") {
		t.Errorf("print queue starts\n%s", got)
	}
	if strings.Count(got, "Create queues") != 1 {
		t.Errorf("section header repeated:\n%s", got)
	}
	// A server with a value that is empty prints it quoted so that the
	// line still parses.
	got = FormatPrint(proto.ObjServer, []proto.Status{{Attrs: []proto.Attr{attr("comment", ""), attr("managers", "")}}})
	want := "#\n# Set server attributes.\n#\nset server comment = \"\"\nset server managers = \"\"\n"
	if got != want {
		t.Errorf("empty values print as\n%q\nwant\n%q", got, want)
	}
}

// object is what a sequence of qmgr commands builds for one object.
type object struct {
	created bool
	attrs   map[string]string
}

// replay parses print output the way qmgr reads a file and applies the
// commands to an in-memory model, joining += elements with commas as the
// server does for list attributes.
func replay(t *testing.T, text string) map[string]*object {
	t.Helper()
	objs := map[string]*object{}
	get := func(key string) *object {
		if objs[key] == nil {
			objs[key] = &object{attrs: map[string]string{}}
		}
		return objs[key]
	}
	var in Input
	var cmds []string
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		c, _ := in.Line(line)
		cmds = append(cmds, c...)
	}
	cmds = append(cmds, in.End()...)
	for _, text := range cmds {
		cmd, err := Parse(text)
		if err != nil {
			t.Fatalf("print output does not parse: %v", err)
		}
		key := cmd.Object.String()
		// The default scheduler is printed unnamed, as the server is.
		unnamed := cmd.Object == proto.ObjServer || cmd.Object == proto.ObjSched && cmd.Names == nil
		if !unnamed {
			if len(cmd.Names) != 1 {
				t.Fatalf("%q: want one name", text)
			}
			key += " " + cmd.Names[0].Name
		}
		o := get(key)
		switch cmd.Verb {
		case VerbCreate:
			if o.created {
				t.Errorf("%s created twice", key)
			}
			o.created = true
		case VerbSet:
			if !unnamed && !o.created {
				t.Errorf("%q before create", text)
			}
		default:
			t.Fatalf("unexpected command %q in print output", text)
		}
		for _, a := range cmd.Attrs {
			switch a.Op {
			case proto.OpSet:
				o.attrs[a.FullName()] = a.Value
			case proto.OpIncr:
				o.attrs[a.FullName()] += "," + a.Value
			default:
				t.Fatalf("%q: op %v", text, a.Op)
			}
		}
	}
	return objs
}

func TestPrintRoundTrip(t *testing.T) {
	t.Parallel()
	server, queues, nodes := printFixture()
	nasty := []string{
		"plain", "two words", "a,b", "semi;colon", "#hash", "mid#hash", `dq"`, `sq'`,
		`both " and '`, `'"'"`, "tab\tin", "trailing ", " leading", "=", "+=x", "",
		"ünïcödé", `\backslash`,
	}
	for i, v := range nasty {
		queues = append(queues, proto.Status{Name: fmt.Sprintf("q%d", i), Attrs: []proto.Attr{
			attr("queue_type", "Execution"), attr("comment", v),
		}})
	}
	nodes = append(nodes, proto.Status{Name: "n3", Attrs: []proto.Attr{
		attr("Mom", "a.example.com,b.example.com"), attr("state", "offline"),
	}})
	got := replay(t, FormatPrintServer(server, nil, queues, nodes))

	want := map[string]*object{}
	add := func(key string, o proto.Status, obj proto.ObjectType) {
		w := &object{created: obj != proto.ObjServer, attrs: map[string]string{}}
		for _, a := range o.Attrs {
			switch {
			case ReadOnly(obj, a.Name):
			case obj == proto.ObjNode && a.Name == "state":
				if hasElem(a.Value, "offline") {
					w.attrs["state"] = "offline"
				}
			case obj == proto.ObjNode && a.Name == "Mom" && a.Value == o.Name:
			case obj == proto.ObjNode && a.Name == "Port" && a.Value == "15002":
			default:
				w.attrs[a.FullName()] = a.Value
			}
		}
		want[key] = w
	}
	for _, q := range queues {
		add("queue "+q.Name, q, proto.ObjQueue)
	}
	add("server", server, proto.ObjServer)
	for _, n := range nodes {
		add("node "+n.Name, n, proto.ObjNode)
	}
	if !reflect.DeepEqual(got, want) {
		for k, w := range want {
			if g := got[k]; g == nil || !reflect.DeepEqual(*g, *w) {
				t.Errorf("%s: replayed %+v, want %+v", k, g, *w)
			}
		}
		for k := range got {
			if want[k] == nil {
				t.Errorf("unexpected object %s", k)
			}
		}
	}
	// The read-only attributes really were left out.
	for _, ro := range []string{"total_jobs", "server_state", "resources_assigned", "hasnodes", "jobs", "loadave", "pbs_version"} {
		for k, o := range got {
			for name := range o.attrs {
				if strings.HasPrefix(name, ro) {
					t.Errorf("%s: read-only %s printed", k, name)
				}
			}
		}
	}
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		obj  proto.ObjectType
		name string
		want bool
	}{
		{proto.ObjServer, "server_state", true},
		{proto.ObjServer, "resources_assigned", true},
		{proto.ObjServer, "next_job_number", true},
		{proto.ObjServer, "scheduling", false},
		{proto.ObjServer, "resources_default", false},
		{proto.ObjQueue, "hasnodes", true},
		{proto.ObjQueue, "state_count", true},
		{proto.ObjQueue, "enabled", false},
		{proto.ObjNode, "jobs", true},
		{proto.ObjNode, "ntype", false},
		{proto.ObjNode, "queue", true},
		{proto.ObjServer, "server_name", true},
		{proto.ObjServer, "no_such_attribute", true},
		{proto.ObjNode, "resources_available", false},
		{proto.ObjNode, "comment", false},
		{proto.ObjQueue, "jobs", true}, // not a queue attribute here: print leaves it out
		{proto.ObjSched, "sched_host", true},
		{proto.ObjSched, "sched_priv", true},
		{proto.ObjSched, "state", true},
		{proto.ObjSched, "pbs_version", true},
		{proto.ObjSched, "log_events", false},
		{proto.ObjSched, "scheduling", false},
		{proto.ObjSched, "sched_cycle_length", false},
	}
	for _, tt := range tests {
		if got := ReadOnly(tt.obj, tt.name); got != tt.want {
			t.Errorf("ReadOnly(%v, %s) = %v, want %v", tt.obj, tt.name, got, tt.want)
		}
	}
}

// schedFixture is the sched object as the server shows it.
func schedFixture() proto.Status {
	return proto.Status{Name: "default", Attrs: []proto.Attr{
		attr("sched_host", "pbs1"),
		attr("sched_port", "15004"),
		attr("pbs_version", "23.06.06"),
		attr("sched_cycle_length", "00:20:00"),
		attr("opt_backfill_fuzzy", "off"),
		attr("sched_priv", "/var/spool/pbs/sched_priv"),
		attr("sched_log", "/var/spool/pbs/sched_logs"),
		attr("scheduling", "True"),
		attr("scheduler_iteration", "300"),
		attr("state", "idle"),
		attr("log_events", "2047"),
	}}
}

// list sched shows a "Sched <name>" header, as OpenPBS's qmgr does.
func TestFormatListSched(t *testing.T) {
	t.Parallel()
	got := FormatList(proto.ObjSched, []proto.Status{schedFixture()}, time.UTC)
	want := `Sched default
    sched_host = pbs1
    sched_port = 15004
    pbs_version = 23.06.06
    sched_cycle_length = 00:20:00
    opt_backfill_fuzzy = off
    sched_priv = /var/spool/pbs/sched_priv
    sched_log = /var/spool/pbs/sched_logs
    scheduling = True
    scheduler_iteration = 300
    state = idle
    log_events = 2047

`
	if got != want {
		t.Errorf("FormatList sched =\n%s\nwant\n%s", got, want)
	}
}

// print sched writes "set sched" lines without a name for the default
// scheduler (OpenPBS's form), no "create sched" line (the scheduler
// exists: a replay would be refused), and none for the attributes a
// manager cannot set; the lines replay to the settable attributes.
func TestFormatPrintSched(t *testing.T) {
	t.Parallel()
	got := FormatPrint(proto.ObjSched, []proto.Status{schedFixture()})
	want := `#
# Set scheduler attributes.
#
set sched sched_cycle_length = 00:20:00
set sched opt_backfill_fuzzy = off
set sched scheduling = True
set sched scheduler_iteration = 300
set sched log_events = 2047
`
	if got != want {
		t.Errorf("FormatPrint sched =\n%s\nwant\n%s", got, want)
	}
	replayed := replay(t, got)
	wantAttrs := map[string]string{
		"sched_cycle_length": "00:20:00", "opt_backfill_fuzzy": "off", "scheduling": "True",
		"scheduler_iteration": "300", "log_events": "2047",
	}
	if o := replayed["sched"]; o == nil || !reflect.DeepEqual(o.attrs, wantAttrs) || len(replayed) != 1 {
		t.Errorf("print sched replays as %+v, want one sched with %v", replayed, wantAttrs)
	}
	if got := FormatPrint(proto.ObjSched, nil); got != "" {
		t.Errorf("FormatPrint of no sched = %q, want nothing", got)
	}
}

// A hook prints as OpenPBS prints it: create, one set per attribute with
// the events as "=" then "+=", and its files as imports of base64 lines
// up to a blank line (a configuration file only when one was imported).
func TestFormatPrintHook(t *testing.T) {
	t.Parallel()
	script := strings.Repeat("import pbs\n", 8)
	b64 := base64.StdEncoding.EncodeToString([]byte(script))
	hooks := []proto.Status{{Name: "h1", Attrs: []proto.Attr{
		attr("type", "site"), attr("enabled", "true"), attr("event", "queuejob,modifyjob"),
		attr("user", "pbsadmin"), attr("alarm", "30"), attr("order", "1"), attr("debug", "false"),
		attr("fail_action", "none"),
		attr(proto.AttrHookContent, b64), attr(proto.AttrHookConfig, ""), attr(proto.AttrHookConfigSuffix, ""),
	}}}
	want := "#\n# Create hooks and set their properties.\n#\n" +
		"#\n# Create and define hook h1\n#\n" +
		"create hook h1\n" +
		"set hook h1 type = site\n" +
		"set hook h1 enabled = true\n" +
		"set hook h1 event = queuejob\n" +
		"set hook h1 event += modifyjob\n" +
		"set hook h1 user = pbsadmin\n" +
		"set hook h1 alarm = 30\n" +
		"set hook h1 order = 1\n" +
		"set hook h1 debug = false\n" +
		"set hook h1 fail_action = none\n" +
		"import hook h1 application/x-python base64 -\n" +
		b64[:76] + "\n" + b64[76:] + "\n" +
		"\n"
	if got := FormatPrint(proto.ObjHook, hooks); got != want {
		t.Errorf("print hook:\n%s\nwant\n%s", got, want)
	}
	list := FormatList(proto.ObjHook, []proto.Status{{Name: "h1", Attrs: hooks[0].Attrs[:3]}}, time.UTC)
	if want := "Hook h1\n    type = site\n    enabled = true\n    event = queuejob,modifyjob\n\n"; list != want {
		t.Errorf("list hook:\n%s\nwant\n%s", list, want)
	}
}
