package resc

import (
	"reflect"
	"testing"
)

func TestSplitExecVnode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []ExecPart
	}{
		{"", nil},
		{"n1+n2", []ExecPart{{Node: "n1"}, {Node: "n2"}}},
		{"(n1:ncpus=2:mem=1gb)+ (h[0]:ncpus=1) +", []ExecPart{{Node: "n1", Spec: "ncpus=2:mem=1gb"}, {Node: "h[0]", Spec: "ncpus=1"}}},
		{"(:ncpus=1)", []ExecPart{{Node: "", Spec: "ncpus=1"}}},
		{" + + ", nil},
	} {
		if got := SplitExecVnode(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitExecVnode(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// An allocation renders exec_host and exec_vnode as OpenPBS shows them,
// and reads back from them as it was; its accessors answer from the typed
// chunks.
func TestAllocRendersAndReads(t *testing.T) {
	t.Parallel()
	a := Alloc{
		{Vnode: "h[0]", Host: "h", Ncpus: 2, Resources: []Pair{{"ncpus", "2"}, {"mem", "1gb"}}},
		{Vnode: "h[1]", Host: "h", Ncpus: 1, Resources: []Pair{{"ncpus", "1"}}},
		{Vnode: "g", Host: "g", Ncpus: 4, Resources: []Pair{{"ncpus", "4"}, {"ngpus", "1"}}},
	}
	if got, want := a.ExecHost(), "h/0*2+h/1+g/0*4"; got != want {
		t.Errorf("ExecHost %q, want %q", got, want)
	}
	if got, want := a.ExecVnode(), "(h[0]:ncpus=2:mem=1gb)+(h[1]:ncpus=1)+(g:ncpus=4:ngpus=1)"; got != want {
		t.Errorf("ExecVnode %q, want %q", got, want)
	}
	if back := ParseAlloc(a.ExecHost(), a.ExecVnode()); !back.Equal(a) {
		t.Errorf("read back: %+v, want %+v", back, a)
	}
	if a.Mother() != "h" || !a.OnHost("g") || a.OnHost("h[0]") {
		t.Errorf("mother %q, on g %v, on h[0] %v", a.Mother(), a.OnHost("g"), a.OnHost("h[0]"))
	}
	if got := a.Hosts(); !reflect.DeepEqual(got, []string{"h", "g"}) {
		t.Errorf("Hosts %v", got)
	}
	if got := a.Vnodes(); !reflect.DeepEqual(got, []string{"h[0]", "h[1]", "g"}) {
		t.Errorf("Vnodes %v", got)
	}
	am := a.Amounts(nil)
	if am[0]["mem"] != 1<<30 || am[0]["ncpus"] != 2 || am[2]["ngpus"] != 1 {
		t.Errorf("Amounts %v", am)
	}
	other := ParseAlloc(a.ExecHost(), "(h[0]:ncpus=9:mem=1gb)+(h[1]:ncpus=1)+(g:ncpus=4:ngpus=1)")
	if a.Equal(other) || !a.Equal(ParseAlloc(a.ExecHost(), a.ExecVnode())) {
		t.Error("Equal does not tell a chunk's other amount, or tells the same allocation apart")
	}
	var none Alloc
	if none.Mother() != "" || none.ExecHost() != "" || none.ExecVnode() != "" || ParseAlloc("", "") != nil {
		t.Error("an empty allocation renders or reads as something")
	}
}

// Text from before the typed allocation: exec_host alone (one chunk per
// part), more exec_vnode parts than exec_host ones, and parts that do not
// read.
func TestParseAllocOldText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host, vnode string
		want        Alloc
	}{
		{"n1/0*2+n2/0", "", Alloc{
			{Vnode: "n1", Host: "n1", Ncpus: 2, Resources: []Pair{{"ncpus", "2"}}},
			{Vnode: "n2", Host: "n2", Ncpus: 1, Resources: []Pair{{"ncpus", "1"}}}}},
		{"", "(n1:ncpus=3:bad)+(:ncpus=1)+n2", Alloc{
			{Vnode: "n1", Host: "n1", Ncpus: 3, Resources: []Pair{{"ncpus", "3"}}},
			{Vnode: "n2", Host: "n2", Ncpus: 1}}},
		{"n1/0*x", "(v1:mem=1kb)", Alloc{{Vnode: "v1", Host: "n1", Ncpus: 1, Resources: []Pair{{"mem", "1kb"}}}}},
	} {
		if got := ParseAlloc(tc.host, tc.vnode); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseAlloc(%q, %q) = %+v, want %+v", tc.host, tc.vnode, got, tc.want)
		}
	}
}

// FuzzParseAlloc: any text reads without a panic, and what it reads
// renders to text that reads back the same.
func FuzzParseAlloc(f *testing.F) {
	f.Add("n1/0*2+n2/0", "(n1:ncpus=2:mem=1gb)+(n2:ncpus=1)")
	f.Add("", "n1+n2")
	f.Add("h/0*x+", "(h[0]:a=b:c)+(:x=1)")
	f.Fuzz(func(t *testing.T, host, vnode string) {
		a := ParseAlloc(host, vnode)
		for _, h := range a {
			if h.Vnode == "" || h.Host == "" {
				t.Fatalf("a chunk without its node: %+v", h)
			}
		}
		if back := ParseAlloc(a.ExecHost(), a.ExecVnode()); len(back) != len(a) {
			t.Fatalf("%q %q reads as %d chunks, rendered and read again as %d", host, vnode, len(a), len(back))
		}
	})
}
