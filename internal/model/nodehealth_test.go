package model

import (
	"testing"

	"github.com/gopbs/gopbs/proto"
)

func TestApplyHealth(t *testing.T) {
	t.Parallel()
	const bad, worse = "ERROR: /scratch is full", "ERROR: no infiniband"
	node := func(state, comment, mark string) *Object {
		o := NewObject("n1")
		for name, v := range map[string]string{proto.AttrNodeState: state, proto.AttrComment: comment, proto.AttrNodeOfflineByCheck: mark} {
			if v != "" {
				o.Set(name, "", v)
			}
		}
		return o
	}
	tests := []struct {
		name   string
		in     *Object
		health string
		want   HealthChange
		state  string // after; "" unset
		note   string
		mark   string
	}{
		{"healthy stays", node("", "", ""), "", HealthSame, "", "", ""},
		{"failing takes a free node offline", node(NodeFree, "", ""), bad, HealthOffline, NodeOffline, bad, bad},
		{"failing replaces a comment", node("", "was here", ""), bad, HealthOffline, NodeOffline, bad, bad},
		{"still failing", node(NodeOffline, bad, bad), bad, HealthSame, NodeOffline, bad, bad},
		{"another message", node(NodeOffline, bad, bad), worse, HealthMessage, NodeOffline, worse, worse},
		{"another message keeps an operator's comment", node(NodeOffline, "looking at it", bad), worse, HealthMessage, NodeOffline, "looking at it", worse},
		{"an admin's offline is theirs", node(NodeOffline, "maintenance", ""), bad, HealthSame, NodeOffline, "maintenance", ""},
		{"an admin's offline stays when it passes", node(NodeOffline, "maintenance", ""), "", HealthSame, NodeOffline, "maintenance", ""},
		{"passing brings it back", node(NodeOffline, bad, bad), "", HealthOnline, NodeFree, "", ""},
		{"passing keeps an operator's comment", node(NodeOffline, "looking at it", bad), "", HealthOnline, NodeFree, "looking at it", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.in.Clone()
			got, change := ApplyHealth(tt.in, tt.health)
			if change != tt.want {
				t.Errorf("change %d, want %d", change, tt.want)
			}
			for name, want := range map[string]string{proto.AttrNodeState: tt.state, proto.AttrComment: tt.note, proto.AttrNodeOfflineByCheck: tt.mark} {
				if v, _ := got.Get(name); v != want {
					t.Errorf("%s = %q, want %q", name, v, want)
				}
			}
			for k, v := range before.Attrs {
				if tt.in.Attrs[k] != v || len(tt.in.Attrs) != len(before.Attrs) {
					t.Fatalf("the node given was changed: %v, was %v", tt.in.Attrs, before.Attrs)
				}
			}
		})
	}
}

// A manager's change of the state makes the offline theirs; other
// changes (a comment) leave it the check's.
func TestClearHealthMark(t *testing.T) {
	t.Parallel()
	o := NewObject("n1")
	o.Set(proto.AttrNodeOfflineByCheck, "", "ERROR x")
	ClearHealthMark(o, []proto.Attr{{Name: proto.AttrComment, Value: "hm"}})
	if _, ok := o.Get(proto.AttrNodeOfflineByCheck); !ok {
		t.Fatal("a comment cleared the mark")
	}
	ClearHealthMark(o, []proto.Attr{{Name: proto.AttrNodeState, Value: NodeOffline}})
	if v, ok := o.Get(proto.AttrNodeOfflineByCheck); ok {
		t.Fatalf("a state set left the mark %q", v)
	}
}
