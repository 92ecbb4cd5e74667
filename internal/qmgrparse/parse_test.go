package qmgrparse

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

func TestVerbPrefixes(t *testing.T) {
	t.Parallel()
	// Single letters resolve in PBS's order (create, delete, set, unset,
	// list, print, active, help, quit, exit); two letters or more are
	// unambiguous.
	single := map[string]Verb{
		"c": VerbCreate, "d": VerbDelete, "s": VerbSet, "u": VerbUnset, "l": VerbList,
		"p": VerbPrint, "a": VerbActive, "h": VerbHelp, "?": VerbHelp, "q": VerbQuit, "e": VerbExit,
	}
	for w, want := range single {
		if got := matchVerb(w); got != want {
			t.Errorf("matchVerb(%q) = %v, want %v", w, got, want)
		}
	}
	for _, want := range []Verb{VerbCreate, VerbDelete, VerbSet, VerbUnset, VerbList, VerbPrint,
		VerbActive, VerbHelp, VerbQuit, VerbExit, VerbImport, VerbExport} {
		word := want.String()
		from := 2
		if want == VerbExport {
			from = 3 // "ex" is exit, tried first as OpenPBS does
		}
		for n := from; n <= len(word); n++ {
			if got := matchVerb(word[:n]); got != want {
				t.Errorf("matchVerb(%q) = %v, want %v", word[:n], got, want)
			}
		}
	}
	for _, w := range []string{"x", "sets", "Set", "LIST", "creates", "imports", "??"} {
		if got := matchVerb(w); got != 0 {
			t.Errorf("matchVerb(%q) = %v, want no verb", w, got)
		}
	}
}

func TestObjectPrefixes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		word        string
		obj         proto.ObjectType
		unsupported string
	}{
		{"s", proto.ObjServer, ""}, {"se", proto.ObjServer, ""}, {"serv", proto.ObjServer, ""},
		{"server", proto.ObjServer, ""},
		{"q", proto.ObjQueue, ""}, {"que", proto.ObjQueue, ""}, {"queue", proto.ObjQueue, ""},
		{"queues", proto.ObjQueue, ""},
		{"n", proto.ObjNode, ""}, {"no", proto.ObjNode, ""}, {"node", proto.ObjNode, ""},
		{"nodes", proto.ObjNode, ""},
		{"r", proto.ObjResource, ""}, {"resource", proto.ObjResource, ""},
		{"sc", proto.ObjSched, ""}, {"sch", proto.ObjSched, ""}, {"sched", proto.ObjSched, ""},
		{"h", proto.ObjHook, ""}, {"hook", proto.ObjHook, ""},
		{"p", 0, "pbshook"}, {"pbshook", 0, "pbshook"},
		{"x", 0, ""}, {"queuex", 0, ""}, {"Server", 0, ""}, {"servers", 0, ""},
	}
	for _, tt := range tests {
		obj, uns := matchObject(tt.word)
		if obj != tt.obj || uns != tt.unsupported {
			t.Errorf("matchObject(%q) = %v, %q; want %v, %q", tt.word, obj, uns, tt.obj, tt.unsupported)
		}
	}
}

func set(name, res, value string) proto.Attr {
	return proto.Attr{Name: name, Resource: res, Value: value, Op: proto.OpSet}
}

func incr(name, value string) proto.Attr {
	return proto.Attr{Name: name, Value: value, Op: proto.OpIncr}
}

func unset(name, res string) proto.Attr {
	return proto.Attr{Name: name, Resource: res, Op: proto.OpUnset}
}

func names(ns ...string) []ObjName {
	var out []ObjName
	for _, n := range ns {
		name, server, _ := cut(n)
		out = append(out, ObjName{Name: name, Server: server})
	}
	return out
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '@' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

type parseCase struct {
	text string
	want Command
}

// parseCases are valid commands and what they mean; the round-trip test
// reuses them.
func parseCases() []parseCase {
	return []parseCase{
		{"s s scheduling=true", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("scheduling", "", "true")}}},
		{"s q workq enabled=true", Command{Verb: VerbSet, Object: proto.ObjQueue, Names: names("workq"),
			Attrs: []proto.Attr{set("enabled", "", "true")}}},
		{"set queue workq enabled = True, max_running=10", Command{Verb: VerbSet, Object: proto.ObjQueue,
			Names: names("workq"), Attrs: []proto.Attr{set("enabled", "", "True"), set("max_running", "", "10")}}},
		{"  set\tserver   scheduling =  true  ", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("scheduling", "", "true")}}},
		{"set server managers += root@host1", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{incr("managers", "root@host1")}}},
		{"set server managers-=root@host1", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{{Name: "managers", Value: "root@host1", Op: proto.OpDecr}}}},
		{"set server resources_default.walltime = 01:00:00", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("resources_default", "walltime", "01:00:00")}}},
		{"set server resources_available.foo-bar=3", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("resources_available", "foo-bar", "3")}}},
		{"set server resources_available.foo-=3", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{{Name: "resources_available", Resource: "foo", Value: "3", Op: proto.OpDecr}}}},
		{"set server resources_default.select=1:ncpus=2", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("resources_default", "select", "1:ncpus=2")}}},
		{"set queue a,b@svr,@other started=false", Command{Verb: VerbSet, Object: proto.ObjQueue,
			Names: names("a", "b@svr", "@other"), Attrs: []proto.Attr{set("started", "", "false")}}},
		{`set server comment = "hello, world; #1"`, Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("comment", "", "hello, world; #1")}}},
		{`set server comment = 'say "hi"'`, Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("comment", "", `say "hi"`)}}},
		{`set server comment = ab"c d"'e'f`, Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("comment", "", "abc def")}}},
		{`set server comment = ""`, Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("comment", "", "")}}},
		{"set server custom_attr = 1", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("custom_attr", "", "1")}}},
		{"set server svr1 custom_attr = 1", Command{Verb: VerbSet, Object: proto.ObjServer, Names: names("svr1"),
			Attrs: []proto.Attr{set("custom_attr", "", "1")}}},
		{"s n node1 state=offline", Command{Verb: VerbSet, Object: proto.ObjNode, Names: names("node1"),
			Attrs: []proto.Attr{set("state", "", "offline")}}},
		{"set node 1n resources_available.ncpus=4", Command{Verb: VerbSet, Object: proto.ObjNode, Names: names("1n"),
			Attrs: []proto.Attr{set("resources_available", "ncpus", "4")}}},
		{"set server managers = root@vm,alice@vm", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("managers", "", "root@vm,alice@vm")}}},
		{"set server submission_filters = /a,/b, scheduling = true", Command{Verb: VerbSet, Object: proto.ObjServer,
			Attrs: []proto.Attr{set("submission_filters", "", "/a,/b"), set("scheduling", "", "true")}}},
		{"unset server submission_filters", Command{Verb: VerbUnset, Object: proto.ObjServer,
			Attrs: []proto.Attr{unset("submission_filters", "")}}},
		{"unset server scheduling, managers", Command{Verb: VerbUnset, Object: proto.ObjServer,
			Attrs: []proto.Attr{unset("scheduling", ""), unset("managers", "")}}},
		{"u q workq resources_max.ncpus", Command{Verb: VerbUnset, Object: proto.ObjQueue, Names: names("workq"),
			Attrs: []proto.Attr{unset("resources_max", "ncpus")}}},
		{"list server", Command{Verb: VerbList, Object: proto.ObjServer}},
		{"l q", Command{Verb: VerbList, Object: proto.ObjQueue}},
		{"list queue workq max_running, enabled", Command{Verb: VerbList, Object: proto.ObjQueue,
			Names: names("workq"), Attrs: []proto.Attr{{Name: "max_running"}, {Name: "enabled"}}}},
		{"list queue max_running", Command{Verb: VerbList, Object: proto.ObjQueue,
			Attrs: []proto.Attr{{Name: "max_running"}}}},
		{"p n n1,n2", Command{Verb: VerbPrint, Object: proto.ObjNode, Names: names("n1", "n2")}},
		{"p s", Command{Verb: VerbPrint, Object: proto.ObjServer}},
		// The sched object, as OpenPBS's PTL tests and admins' scripts
		// use it: its name optional (the default scheduler).
		{"list sched default", Command{Verb: VerbList, Object: proto.ObjSched, Names: names("default")}},
		{"list sched", Command{Verb: VerbList, Object: proto.ObjSched}},
		{"l sc", Command{Verb: VerbList, Object: proto.ObjSched}},
		{"print sched", Command{Verb: VerbPrint, Object: proto.ObjSched}},
		{"p sched default", Command{Verb: VerbPrint, Object: proto.ObjSched, Names: names("default")}},
		{"set sched scheduling = True", Command{Verb: VerbSet, Object: proto.ObjSched,
			Attrs: []proto.Attr{set("scheduling", "", "True")}}},
		{"set sched scheduler_iteration = 300", Command{Verb: VerbSet, Object: proto.ObjSched,
			Attrs: []proto.Attr{set("scheduler_iteration", "", "300")}}},
		{"set sched default log_events = 2047", Command{Verb: VerbSet, Object: proto.ObjSched, Names: names("default"),
			Attrs: []proto.Attr{set("log_events", "", "2047")}}},
		{"set sched sched_cycle_length = 00:20:00", Command{Verb: VerbSet, Object: proto.ObjSched,
			Attrs: []proto.Attr{set("sched_cycle_length", "", "00:20:00")}}},
		{"set sched opt_backfill_fuzzy = low", Command{Verb: VerbSet, Object: proto.ObjSched,
			Attrs: []proto.Attr{set("opt_backfill_fuzzy", "", "low")}}},
		{"set sched other scheduling = False", Command{Verb: VerbSet, Object: proto.ObjSched, Names: names("other"),
			Attrs: []proto.Attr{set("scheduling", "", "False")}}},
		{"unset sched log_events, opt_backfill_fuzzy", Command{Verb: VerbUnset, Object: proto.ObjSched,
			Attrs: []proto.Attr{unset("log_events", ""), unset("opt_backfill_fuzzy", "")}}},
		{"list sched default state, sched_host", Command{Verb: VerbList, Object: proto.ObjSched, Names: names("default"),
			Attrs: []proto.Attr{{Name: "state"}, {Name: "sched_host"}}}},
		{"list sched scheduling", Command{Verb: VerbList, Object: proto.ObjSched,
			Attrs: []proto.Attr{{Name: "scheduling"}}}},
		// OpenPBS's sched attributes this system lacks are attributes,
		// not names: the server answers that it does not know them.
		{"set sched preempt_order = SCR", Command{Verb: VerbSet, Object: proto.ObjSched,
			Attrs: []proto.Attr{set("preempt_order", "", "SCR")}}},
		{"list sched preempt_queue_prio", Command{Verb: VerbList, Object: proto.ObjSched,
			Attrs: []proto.Attr{{Name: "preempt_queue_prio"}}}},
		{"create sched multi", Command{Verb: VerbCreate, Object: proto.ObjSched, Names: names("multi")}},
		{"delete sched default", Command{Verb: VerbDelete, Object: proto.ObjSched, Names: names("default")}},
		{"print queue @default", Command{Verb: VerbPrint, Object: proto.ObjQueue, Names: names("@default")}},
		{"a q q1,q2", Command{Verb: VerbActive, Object: proto.ObjQueue, Names: names("q1", "q2")}},
		{"active server", Command{Verb: VerbActive, Object: proto.ObjServer}},
		{"create queue q1 queue_type=e, enabled=true", Command{Verb: VerbCreate, Object: proto.ObjQueue,
			Names: names("q1"), Attrs: []proto.Attr{set("queue_type", "", "e"), set("enabled", "", "true")}}},
		{"c n n1 Mom=host1,Port=15003", Command{Verb: VerbCreate, Object: proto.ObjNode, Names: names("n1"),
			Attrs: []proto.Attr{set("Mom", "", "host1"), set("Port", "", "15003")}}},
		{"c q q1", Command{Verb: VerbCreate, Object: proto.ObjQueue, Names: names("q1")}},
		{"delete queue q1", Command{Verb: VerbDelete, Object: proto.ObjQueue, Names: names("q1")}},
		{"d n n1@svr", Command{Verb: VerbDelete, Object: proto.ObjNode, Names: names("n1@svr")}},
		{"help", Command{Verb: VerbHelp}},
		{"help set", Command{Verb: VerbHelp, Topic: "set"}},
		{"? active", Command{Verb: VerbHelp, Topic: "active"}},
		{"q", Command{Verb: VerbQuit}},
		{"exit now", Command{Verb: VerbExit}},
		{"create hook h1", Command{Verb: VerbCreate, Object: proto.ObjHook, Names: []ObjName{{Name: "h1"}}}},
		{"set hook h1 event = queuejob,modifyjob, alarm = 10", Command{Verb: VerbSet, Object: proto.ObjHook, Names: []ObjName{{Name: "h1"}},
			Attrs: []proto.Attr{set("event", "", "queuejob,modifyjob"), set("alarm", "", "10")}}},
		{"s h _x event += periodic", Command{Verb: VerbSet, Object: proto.ObjHook, Names: []ObjName{{Name: "_x"}},
			Attrs: []proto.Attr{{Name: "event", Value: "periodic", Op: proto.OpIncr}}}},
		{"l h", Command{Verb: VerbList, Object: proto.ObjHook}},
		{"import hook h1 application/x-python default /tmp/h1.py", Command{Verb: VerbImport, Object: proto.ObjHook,
			Names: []ObjName{{Name: "h1"}}, Content: &Content{Type: "application/x-python", Encoding: "default", File: "/tmp/h1.py"}}},
		{`i h h1 application/x-config base64 "/tmp/my conf.json"`, Command{Verb: VerbImport, Object: proto.ObjHook,
			Names: []ObjName{{Name: "h1"}}, Content: &Content{Type: "application/x-config", Encoding: "base64", File: "/tmp/my conf.json"}}},
		{"export hook h1 application/x-python default", Command{Verb: VerbExport, Object: proto.ObjHook,
			Names: []ObjName{{Name: "h1"}}, Content: &Content{Type: "application/x-python", Encoding: "default"}}},
		{"exp h h1 application/x-config base64 -", Command{Verb: VerbExport, Object: proto.ObjHook,
			Names: []ObjName{{Name: "h1"}}, Content: &Content{Type: "application/x-config", Encoding: "base64", File: "-"}}},
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range parseCases() {
		t.Run(tt.text, func(t *testing.T) {
			got, err := Parse(tt.text)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.text, err)
			}
			want := tt.want
			want.Text = trimWhite(tt.text)
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("Parse(%q) =\n%+v\nwant\n%+v", tt.text, *got, want)
			}
		})
	}
}

func TestParseBlank(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "  ", "\t\n"} {
		cmd, err := Parse(s)
		if cmd != nil || err != nil {
			t.Errorf("Parse(%q) = %v, %v; want nothing", s, cmd, err)
		}
	}
}

func TestNameOrAttribute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text  string
		names []ObjName
	}{
		{"s s scheduling=true", nil},
		{"s s scheduling = true", nil},
		{"s s Scheduling=true", nil},
		{"s s resources_max.ncpus=2", nil},
		{"set server foo=1", nil},
		{"set server foo =1", nil},
		{"s q enabled=true", nil},
		{"s q workq enabled=true", names("workq")},
		{"list queue max_running", nil},
		{"list queue workq", names("workq")},
		{"list queue enabled@svr", names("enabled@svr")},
		{"s n n1 comment=x", names("n1")},
		{"s n comment=x", nil},
		{"s n state=offline", nil},
		{"list server host1", names("host1")},
		{"u s host1 comment", names("host1")},
	}
	for _, tt := range tests {
		cmd := parseNames(t, tt.text, tt.names)
		if cmd == nil {
			continue
		}
		if cmd.Verb == VerbSet && len(cmd.Attrs) == 0 {
			t.Errorf("Parse(%q) has no attributes", tt.text)
		}
	}
}

// parseNames parses text and checks the object names it gives; nil when
// text does not parse.
func parseNames(t *testing.T, text string, want []ObjName) *Command {
	t.Helper()
	cmd, err := Parse(text)
	if err != nil {
		t.Errorf("Parse(%q): %v", text, err)
		return nil
	}
	if !reflect.DeepEqual(cmd.Names, want) {
		t.Errorf("Parse(%q).Names = %v, want %v", text, cmd.Names, want)
	}
	return cmd
}

func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want string
	}{
		{"foo server", "qmgr: Illegal operation: foo\nTry 'help' if you are having trouble.\nfoo server\n^"},
		{"Set server a=1", "qmgr: Illegal operation: Set\nTry 'help' if you are having trouble.\nSet server a=1\n^"},
		{"set foo bar", "qmgr: Illegal object type: foo.\nset foo bar\n    ^"},
		{"list =x", "qmgr: Illegal object type: =.\nlist =x\n     ^"},
		{"set", "qmgr: No object type given\nset\n   ^"},
		{"  list   ", "qmgr: No object type given\nlist\n    ^"},
		{"list scheds", "qmgr: Illegal object type: scheds.\nlist scheds\n     ^"},
		{"set sched", "qmgr: Syntax error - attribute required for operation\nset sched\n         ^"},
		{"create sched", "qmgr: Syntax error - object name required for operation\ncreate sched\n            ^"},
		{"delete sched", "qmgr: Syntax error - object name required for operation\ndelete sched\n            ^"},
		{"l pbsh", "qmgr: Object type not supported: pbshook.\nl pbsh\n  ^"},
		{"import queue q application/x-python default f", "qmgr: Syntax error - import is for hooks only\nimport queue q application/x-python default f\n       ^"},
		{"import hook", "qmgr: Syntax error - object name required for operation\nimport hook\n           ^"},
		{"import hook a,b t e f", "qmgr: Syntax error - import takes one hook\nimport hook a,b t e f\n            ^"},
		{"import hook h1", "qmgr: Syntax error - import requires <content-type>\nimport hook h1\n              ^"},
		{"import hook h1 application/x-python", "qmgr: Syntax error - import requires <content-encoding>\nimport hook h1 application/x-python\n                                   ^"},
		{"import hook h1 application/x-python default", "qmgr: Syntax error - import requires <input-file>\nimport hook h1 application/x-python default\n                                           ^"},
		{"import hook h1 a b c d", "qmgr: Syntax error - unexpected text after the file\nimport hook h1 a b c d\n                     ^"},
		{"set server", "qmgr: Syntax error - attribute required for operation\nset server\n          ^"},
		{"unset queue workq", "qmgr: Syntax error - attribute required for operation\nunset queue workq\n                 ^"},
		{"set\tserver", "qmgr: Syntax error - attribute required for operation\nset\tserver\n   \t      ^"},
		{"set server a=1,", "qmgr: Syntax error - cannot locate attribute\nset server a=1,\n               ^"},
		{"set server a=1, ,b=2", "qmgr: Syntax error - cannot locate attribute\nset server a=1, ,b=2\n                ^"},
		{"set server = 5", "qmgr: Syntax error - cannot locate attribute\nset server = 5\n           ^"},
		{`set server "comment"=1`, "qmgr: Syntax error - cannot locate attribute\nset server \"comment\"=1\n           ^"},
		{"set server resources_max.=1", "qmgr: Syntax error - cannot locate attribute\nset server resources_max.=1\n                         ^"},
		{"set server foo-bar=1", "qmgr: Syntax error - cannot locate attribute\nset server foo-bar=1\n              ^"},
		{"active server scheduling=true", "qmgr: Syntax error - operation does not allow attribute\nactive server scheduling=true\n              ^"},
		{"active queue q1 max_running=3", "qmgr: Syntax error - operation does not allow attribute\nactive queue q1 max_running=3\n                ^"},
		{"delete queue q1 enabled=true", "qmgr: Syntax error - operation does not allow attribute\ndelete queue q1 enabled=true\n                ^"},
		{"create queue", "qmgr: Syntax error - object name required for operation\ncreate queue\n            ^"},
		{"create queue max_running=5", "qmgr: Syntax error - object name required for operation\ncreate queue max_running=5\n             ^"},
		{"delete node", "qmgr: Syntax error - object name required for operation\ndelete node\n           ^"},
		{`set server comment = "abc`, "qmgr: Syntax error - unmatched quote\nset server comment = \"abc\n                     ^"},
		{`set server comment = ab'c`, "qmgr: Syntax error - unmatched quote\nset server comment = ab'c\n                       ^"},
		{"set server scheduling", "qmgr: Syntax error - operator and value required for attribute\nset server scheduling\n                     ^"},
		{"set queue q enabled true", "qmgr: Syntax error - operator and value required for attribute\nset queue q enabled true\n                    ^"},
		{"set server scheduling =", "qmgr: Syntax error - cannot locate value\nset server scheduling =\n                       ^"},
		{"set server a=,b=1", "qmgr: Syntax error - cannot locate value\nset server a=,b=1\n             ^"},
		{"unset server scheduling=true", "qmgr: Syntax error - operation does not allow a value\nunset server scheduling=true\n                       ^"},
		{"list queue workq enabled = x", "qmgr: Syntax error - operation does not allow a value\nlist queue workq enabled = x\n                         ^"},
		{"set server comment = a b", "qmgr: Syntax error - expected ',' before next attribute\nset server comment = a b\n                       ^"},
		{"list queue workq enabled started", "qmgr: Syntax error - expected ',' before next attribute\nlist queue workq enabled started\n                         ^"},
		{"set queue 1q enabled=true", "qmgr: Syntax error - illegal object name\nset queue 1q enabled=true\n          ^"},
		{"set queue a,,b enabled=true", "qmgr: Syntax error - illegal object name\nset queue a,,b enabled=true\n            ^"},
		{"set queue a, enabled=true", "qmgr: Syntax error - illegal object name\nset queue a, enabled=true\n            ^"},
		{"set queue a@ enabled=true", "qmgr: Syntax error - illegal object name\nset queue a@ enabled=true\n            ^"},
		{"set queue a@b@c enabled=true", "qmgr: Syntax error - illegal object name\nset queue a@b@c enabled=true\n             ^"},
		{"list node -n1", "qmgr: Syntax error - illegal object name\nlist node -n1\n          ^"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			cmd, err := Parse(tt.text)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tt.text, cmd)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T, want *SyntaxError", tt.text, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q) error\n%s\nwant\n%s", tt.text, got, tt.want)
			}
		})
	}
}

func TestCommandStringRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tt := range parseCases() {
		cmd, err := Parse(tt.text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.text, err)
		}
		text := cmd.String()
		again, err := Parse(text)
		if err != nil {
			t.Errorf("Parse(%q) (from %q): %v", text, tt.text, err)
			continue
		}
		again.Text, cmd.Text = "", ""
		if !reflect.DeepEqual(again, cmd) {
			t.Errorf("%q -> %q parses as %+v, want %+v", tt.text, text, again, cmd)
		}
	}
}

func TestCommandString(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"s s scheduling=true":                   "set server scheduling = true",
		"s q a,b@s started=1 ,comment= 'x y'":   `set queue a,b@s started = 1, comment = "x y"`,
		"u q workq resources_max.ncpus,enabled": "unset queue workq resources_max.ncpus, enabled",
		"s s managers+=a@b":                     "set server managers += a@b",
		"? set":                                 "help set",
		"e":                                     "exit",
	}
	for in, want := range tests {
		cmd, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if got := cmd.String(); got != want {
			t.Errorf("Parse(%q).String() = %q, want %q", in, got, want)
		}
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"abc", "abc"},
		{"01:00:00", "01:00:00"},
		{"1:ncpus=2", "1:ncpus=2"},
		{"", `""`},
		{"a b", `"a b"`},
		{"a,b", `"a,b"`},
		{"a;b", `"a;b"`},
		{"#x", `"#x"`},
		{"tab\there", "\"tab\there\""},
		{`a"b`, `'a"b'`},
		{`a'b`, `"a'b"`},
		{`a"b'c`, `"a"'"'"b'c"`},
		{`""'`, `'""'"'"`},
	}
	for _, tt := range tests {
		got := Quote(tt.in)
		if got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
		cmd, err := Parse("set server comment = " + got)
		if err != nil {
			t.Errorf("Parse of quoted %q: %v", tt.in, err)
			continue
		}
		if v := cmd.Attrs[0].Value; v != tt.in {
			t.Errorf("Quote(%q) reads back as %q", tt.in, v)
		}
		// What print writes must also survive the line splitter.
		cmds := Split("set server comment = "+got+"; list server", true)
		if len(cmds) != 2 {
			t.Errorf("Split cut quoted %q into %q", tt.in, cmds)
		}
	}
}

func TestVerbManagerCommand(t *testing.T) {
	t.Parallel()
	want := map[Verb]proto.ManagerCommand{
		VerbCreate: proto.MgrCreate, VerbDelete: proto.MgrDelete, VerbSet: proto.MgrSet, VerbUnset: proto.MgrUnset,
	}
	for v := VerbCreate; v <= VerbExit; v++ {
		mc, ok := v.ManagerCommand()
		if w, isMgr := want[v]; ok != isMgr || mc != w {
			t.Errorf("%v.ManagerCommand() = %v, %v; want %v, %v", v, mc, ok, w, isMgr)
		}
	}
}
