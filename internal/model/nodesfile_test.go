package model

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

func TestParseNodesFile(t *testing.T) {
	t.Parallel()
	got, err := ParseNodesFile(strings.NewReader(`# the cluster
n1 np=4 bigmem fast
ts1:ts np=2   # a login node for load balancing
n2 max_load=8 resources_available.mem=16gb

n3
`), "nodes")
	if err != nil {
		t.Fatal(err)
	}
	want := []NodeLine{
		{Name: "n1", Line: 2, Attrs: []proto.Attr{{Name: "resources_available", Resource: "ncpus", Value: "4"}, {Name: "properties", Value: "bigmem,fast"}}},
		{Name: "ts1", Line: 3, Attrs: []proto.Attr{{Name: "ntype", Value: "time-shared"}, {Name: "resources_available", Resource: "ncpus", Value: "2"}}},
		{Name: "n2", Line: 4, Attrs: []proto.Attr{{Name: "max_load", Value: "8"}, {Name: "resources_available", Resource: "mem", Value: "16gb"}}},
		{Name: "n3", Line: 6},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseNodesFileErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ text, want string }{
		{"1node\n", `nodes:1: node name "1node"`},
		{"n1:xx\n", `nodes:1: n1: unknown suffix ":xx"`},
		{"n1\nn1:ts\n", "nodes:2: n1 is already defined on line 1"},
		{"n1 np=0\n", "nodes:1: n1: np=0 (want a positive count"},
		{"n1 np=four\n", "nodes:1: n1: np=four"},
		{"n1 colour=red\n", `nodes:1: n1: unknown node attribute "colour"`},
		{"n1 jobs=x\n", "nodes:1: n1: attribute jobs cannot be set"},
		{"n1 max_load=-1\n", "nodes:1: n1: max_load"},
		{"A \x00\n", `nodes:1: A: "\x00" holds a control character`},
		{"n1 bigmem\x7f\n", "nodes:1: n1: "},
		{"n1 ntype=weird\n", "nodes:1: n1: ntype"},
		// Every bad line is named, and nothing is returned.
		{"n1 np=0\nok\nn2:zz\n", "nodes:1: n1: np=0 (want a positive count of cpus)\nnodes:3: n2: unknown suffix"},
	} {
		got, err := ParseNodesFile(strings.NewReader(tt.text), "nodes")
		if err == nil || got != nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: %v, %v; want error %q", tt.text, got, err, tt.want)
		}
	}
}

func FuzzNodesFile(f *testing.F) {
	f.Add("n1 np=4 bigmem\nts1:ts np=2 # c\n")
	f.Add("n1:ts max_load=3 resources_available.mem=1gb\n")
	f.Fuzz(func(t *testing.T, text string) {
		lines, err := ParseNodesFile(strings.NewReader(text), "nodes")
		if err != nil {
			if lines != nil {
				t.Fatal("nodes and an error")
			}
			return
		}
		seen := map[string]bool{}
		for _, nl := range lines {
			if CheckNodeName(nl.Name) != nil || seen[nl.Name] {
				t.Fatalf("bad or repeated name %q", nl.Name)
			}
			seen[nl.Name] = true
			for _, a := range nl.Attrs {
				if strings.ContainsAny(a.Value, "\n\x00") {
					t.Fatalf("value %q", a.Value)
				}
			}
		}
	})
}
