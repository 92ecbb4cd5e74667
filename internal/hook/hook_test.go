package hook

import (
	"strings"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// qmgr's sets on a hook: what each leaves, or the error naming what is
// wrong; a refused set leaves the hook as it was.
func TestSet(t *testing.T) {
	t.Parallel()
	cases := []struct {
		sets []proto.Attr
		want string // the attributes as list hook shows them, or the error's part
	}{
		{nil, "type=site enabled=true event=\"\" user=pbsadmin alarm=30 order=1 debug=false fail_action=none"},
		{[]proto.Attr{{Name: "event", Value: `"queuejob,modifyjob"`}}, "type=site enabled=true event=queuejob,modifyjob user=pbsadmin alarm=30 order=1 debug=false fail_action=none"},
		{[]proto.Attr{{Name: "event", Value: "queuejob"}, {Name: "event", Value: "runjob", Op: proto.OpIncr}, {Name: "event", Value: "queuejob", Op: proto.OpDecr}}, "event=runjob "},
		{[]proto.Attr{{Name: "event", Value: "periodic"}, {Name: "freq", Value: "60"}}, "event=periodic user=pbsadmin alarm=30 freq=60 "},
		{[]proto.Attr{{Name: "Enabled", Value: "False"}, {Name: "order", Value: "1000"}, {Name: "alarm", Value: "5"}}, "enabled=false event=\"\" user=pbsadmin alarm=5 order=1000 "},
		{[]proto.Attr{{Name: "event", Value: "execjob_begin"}, {Name: "fail_action", Value: "offline_vnodes"}, {Name: "fail_action", Value: "scheduler_restart_cycle", Op: proto.OpIncr}}, "fail_action=offline_vnodes,scheduler_restart_cycle"},
		{[]proto.Attr{{Name: "event", Value: "execjob_prologue"}, {Name: "user", Value: "pbsuser"}}, "user=pbsuser"},
		{[]proto.Attr{{Name: "event", Value: "execjob_prologue"}, {Name: "user", Value: "pbsuser"}, {Name: "event", Value: "execjob_end"}}, "event=execjob_end user=pbsadmin"},
		{[]proto.Attr{{Name: "event", Value: "periodic"}, {Name: "freq", Value: "60"}, {Name: "event", Value: "queuejob"}, {Name: "event", Value: "periodic", Op: proto.OpIncr}}, "freq=120"},
		{[]proto.Attr{{Name: "freq", Value: "60"}}, "hook event must contain at least 'exechost_periodic' or 'periodic'"},
		{[]proto.Attr{{Name: "enabled", Value: "maybe"}}, "unexpected value 'maybe', must be (not case sensitive) true|t|y|1|false|f|n|0"},
		{[]proto.Attr{{Name: "fail_action", Value: "none,offline_vnodes"}}, "fail_action value of a hook must be"},
		{[]proto.Attr{{Name: "order", Value: "0"}}, "order given (0) is outside the acceptable range of [1, 1000] for type 'site'."},
		{[]proto.Attr{{Name: "order", Value: "1001"}}, "order given (1001)"},
		{[]proto.Attr{{Name: "alarm", Value: "0"}}, "set_hook_alarm: alarm value '0' of a hook must be > 0"},
		{[]proto.Attr{{Name: "alarm", Value: "ten"}}, "alarm value 'ten'"},
		{[]proto.Attr{{Name: "event", Value: "queuejob,nosuch"}}, "invalid argument (queuejob,nosuch) to event. Should be one or more of: queuejob,modifyjob,"},
		{[]proto.Attr{{Name: "event", Value: "provision"}}, "event provision is not supported"},
		{[]proto.Attr{{Name: "event", Value: "queuejob"}, {Name: "fail_action", Value: "offline_vnodes"}}, "Can't set hook fail_action value to 'offline_vnodes': hook event must contain at least one of execjob_begin, exechost_startup, execjob_prologue"},
		{[]proto.Attr{{Name: "event", Value: "queuejob"}, {Name: "user", Value: "pbsuser"}}, "Can't set hook user value to 'pbsuser'"},
		{[]proto.Attr{{Name: "user", Value: "root"}}, "user value of a hook must be pbsadmin,pbsuser"},
		{[]proto.Attr{{Name: "type", Value: "pbs"}}, "not allowed to set hook to 'pbs' type"},
		{[]proto.Attr{{Name: "alarm", Value: "3", Op: proto.OpIncr}}, "'alarm' operator not ="},
		{[]proto.Attr{{Name: "color", Value: "red"}}, "Undefined attribute  - color"},
		{[]proto.Attr{{Name: "alarm", Value: "7"}, {Name: "alarm", Op: proto.OpUnset}}, "alarm=30"},
	}
	for _, c := range cases {
		h, err := New("h1")
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.sets {
			before := *h
			if err = h.Set(a); err != nil {
				if before.Events != h.Events || before.Order != h.Order || before.Alarm != h.Alarm || before.FailAction != h.FailAction || before.User != h.User {
					t.Errorf("%v: a refused set changed the hook", c.sets)
				}
				break
			}
		}
		var got string
		if err != nil {
			got = err.Error()
		} else {
			var parts []string
			for _, a := range h.Attrs() {
				parts = append(parts, a.Name+"="+a.Value)
			}
			got = strings.Join(parts, " ")
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want %q in it", c.sets, got, c.want)
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{"h1": true, "site_defaults": true, "a-b": true, "_x": true,
		"": false, "1h": false, "a b": false, "../x": false, "PBS_cgroups": false, strings.Repeat("a", 64): false} {
		if _, err := New(name); (err == nil) != ok {
			t.Errorf("%q: %v", name, err)
		}
	}
}

// The hooks of an event: enabled, with a script, by order then name.
func TestOrdered(t *testing.T) {
	t.Parallel()
	mk := func(name string, order int, events Events, enabled bool, script string) *Hook {
		h, _ := New(name)
		h.Order, h.Events, h.Enabled, h.Script = order, events, enabled, []byte(script)
		return h
	}
	q := Events(QueueJob)
	hooks := []*Hook{mk("z", 1, q, true, "x"), mk("b", 5, q, true, "x"), mk("a", 5, q, true, "x"),
		mk("off", 1, q, false, "x"), mk("empty", 1, q, true, ""), mk("other", 1, Events(RunJob), true, "x")}
	var got []string
	for _, h := range Ordered(hooks, QueueJob) {
		got = append(got, h.Name)
	}
	if g := strings.Join(got, ","); g != "z,a,b" {
		t.Fatalf("queuejob runs %s", g)
	}
}

func FuzzParseEvents(f *testing.F) {
	for _, s := range []string{"queuejob", "queuejob,modifyjob", `""`, " runjob , execjob_end", "nosuch", ","} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseEvents(s)
		if err != nil {
			return
		}
		again, err := ParseEvents(set.String())
		if err != nil || again != set {
			t.Fatalf("%q -> %q -> %v, %v", s, set.String(), again, err)
		}
	})
}

func FuzzParseFailAction(f *testing.F) {
	for _, s := range []string{"none", "offline_vnodes,scheduler_restart_cycle", "clear_vnodes_upon_recovery", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fa, err := ParseFailAction(s)
		if err != nil {
			return
		}
		again, err := ParseFailAction(fa.String())
		if err != nil || again != fa {
			t.Fatalf("%q -> %q -> %v, %v", s, fa.String(), again, err)
		}
	})
}
