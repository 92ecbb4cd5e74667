package place

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/resc"
)

func node(name string, ncpus, memGB float64, extra ...string) *Node {
	n := &Node{Name: name, Avail: map[string]string{"host": name}, Free: map[string]float64{"ncpus": ncpus, "mem": memGB * (1 << 30)}}
	for i := 0; i+1 < len(extra); i += 2 {
		n.Avail[extra[i]] = extra[i+1]
	}
	return n
}

// idle, busy, hostIdle and hostBusy set what jobs hold of a node.
func idle(n *Node) *Node     { n.Idle = true; return n }
func busy(n *Node) *Node     { n.Idle, n.HostIdle = false, false; return n }
func hostIdle(n *Node) *Node { n.HostIdle = true; return n }
func hostBusy(n *Node) *Node { n.HostIdle = false; return n }

func TestPlaceChunks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		sel    string
		place  string
		nodes  []*Node
		hosts  []string
		want   []string // node per chunk
		errHas string
	}{
		{"one chunk first fit", "1:ncpus=2", "free", []*Node{node("a", 1, 8), node("b", 4, 8)}, nil, []string{"b"}, ""},
		{"free reuses a node", "2:ncpus=1", "free", []*Node{node("a", 2, 8), node("b", 2, 8)}, nil, []string{"a", "a"}, ""},
		{"scatter spreads", "2:ncpus=1", "scatter", []*Node{node("a", 2, 8), node("b", 2, 8)}, nil, []string{"a", "b"}, ""},
		{"scatter needs nodes", "3:ncpus=1", "scatter", []*Node{node("a", 4, 8), node("b", 4, 8)}, nil, nil, "separate nodes"},
		{"pack on one node", "2:ncpus=2", "pack", []*Node{node("a", 2, 8), node("b", 4, 8)}, nil, []string{"b", "b"}, ""},
		{"pack impossible", "2:ncpus=3", "pack", []*Node{node("a", 4, 8), node("b", 4, 8)}, nil, nil, "single node"},
		{"memory", "1:ncpus=1:mem=10gb", "free", []*Node{node("a", 4, 8), node("b", 4, 16)}, nil, []string{"b"}, ""},
		{"string resource", "1:ncpus=1:arch=linux", "free", []*Node{node("a", 4, 8, "arch", "aix"), node("b", 4, 8, "arch", "linux")}, nil, []string{"b"}, ""},
		{"host resource", "1:ncpus=1:host=b", "free", []*Node{node("a", 4, 8), node("b", 4, 8)}, nil, []string{"b"}, ""},
		{"property", "1:ncpus=1:bigmem=True", "free", []*Node{node("a", 4, 8), node("b", 4, 8, "bigmem", "True")}, nil, []string{"b"}, ""},
		{"gpus missing", "1:ngpus=1", "free", []*Node{node("a", 4, 8)}, nil, nil, "no node"},
		{"hosts per chunk", "2:ncpus=1", "free", []*Node{node("a", 4, 8), node("b", 4, 8)}, []string{"b", "a"}, []string{"b", "a"}, ""},
		{"one host for all", "2:ncpus=1", "scatter", []*Node{node("a", 4, 8), node("b", 4, 8)}, []string{"a"}, []string{"a", "a"}, ""},
		{"host full", "1:ncpus=8", "free", []*Node{node("a", 4, 8)}, []string{"a"}, nil, "does not have"},
		{"host unknown", "1:ncpus=1", "free", []*Node{node("a", 4, 8)}, []string{"z"}, nil, "not available"},
		{"host count mismatch", "3:ncpus=1", "free", []*Node{node("a", 4, 8), node("b", 4, 8)}, []string{"a", "b"}, nil, "3 chunks"},
		{"mpiprocs is not taken from the node", "2:ncpus=4:mpiprocs=4", "scatter", []*Node{node("a", 4, 8), node("b", 4, 8)}, nil, []string{"a", "b"}, ""},
		{"default one cpu", "1:mem=1gb", "free", []*Node{node("a", 0, 8), node("b", 1, 8)}, nil, []string{"b"}, ""},
		{"excl takes an idle node", "1:ncpus=1", "free:excl", []*Node{busy(node("a", 4, 8)), idle(node("b", 4, 8))}, nil, []string{"b"}, ""},
		{"excl: two chunks on one idle node", "2:ncpus=1", "pack:excl", []*Node{idle(node("a", 4, 8))}, nil, []string{"a", "a"}, ""},
		{"excl: no idle node", "1:ncpus=1", "excl", []*Node{busy(node("a", 4, 8))}, nil, nil, "no node"},
		{"excl on a named busy node", "1:ncpus=1", "excl", []*Node{busy(node("a", 4, 8))}, []string{"a"}, nil, "not free of other jobs"},
		{"exclhost needs the whole host idle", "1:ncpus=1", "exclhost",
			[]*Node{hostBusy(idle(node("a", 4, 8))), idle(hostIdle(node("b", 4, 8)))}, nil, []string{"b"}, ""},
		{"shared ignores idleness", "1:ncpus=1", "free:shared", []*Node{busy(node("a", 4, 8))}, nil, []string{"a"}, ""},
		{"group: one value for all chunks", "3:ncpus=2", "scatter:group=switch",
			[]*Node{node("a", 2, 8, "switch", "s1"), node("b", 2, 8, "switch", "s2"), node("c", 2, 8, "switch", "s1"), node("d", 2, 8, "switch", "s2"), node("e", 2, 8, "switch", "s2")},
			nil, []string{"b", "d", "e"}, ""},
		{"group: no group has room", "2:ncpus=2", "scatter:group=switch",
			[]*Node{node("a", 2, 8, "switch", "s1"), node("b", 2, 8, "switch", "s2")}, nil, nil, "place=group=switch"},
		{"group: nodes without the resource", "1:ncpus=1", "group=rack", []*Node{node("a", 2, 8)}, nil, nil, "no node has rack"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := resc.ParseSelect(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			place, _ := resc.ParsePlace(tt.place)
			before := tt.nodes[0].Free["ncpus"]
			got, err := Chunks(sel, place, tt.nodes, tt.hosts)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("err = %v, want %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var nodes []string
			for _, p := range got {
				nodes = append(nodes, p.Node)
			}
			if !reflect.DeepEqual(nodes, tt.want) {
				t.Fatalf("Placement on %v, want %v", nodes, tt.want)
			}
			if tt.nodes[0].Free["ncpus"] != before {
				t.Fatal("placement changed the caller's free amounts")
			}
		})
	}
}

// Vnodes of one host: exec_host and the nodefile name the host, each
// chunk numbered on it; exec_vnode names the vnodes.
func TestAllocOfVnodes(t *testing.T) {
	t.Parallel()
	sel, _ := resc.ParseSelect("3:ncpus=2:mpiprocs=1")
	var p []Placement
	for _, n := range []string{"h[0]", "h[1]", "g"} {
		p = append(p, Placement{Node: n, Chunk: sel[0].One()})
	}
	alloc, nodefile := AllocOf(p, func(n string) string { return strings.Split(n, "[")[0] })
	host, vnode := alloc.ExecHost(), alloc.ExecVnode()
	if host != "h/0*2+h/1*2+g/0*2" || vnode != "(h[0]:ncpus=2)+(h[1]:ncpus=2)+(g:ncpus=2)" || strings.Join(nodefile, ",") != "h,h,g" {
		t.Errorf("exec_host %q exec_vnode %q nodefile %v", host, vnode, nodefile)
	}
}

func TestAllocOf(t *testing.T) {
	t.Parallel()
	sel, _ := resc.ParseSelect("1:ncpus=2:mem=1gb+2:ncpus=1:mpiprocs=2")
	var p []Placement
	for i, n := range []string{"a", "a", "b"} {
		_ = i
		p = append(p, Placement{Node: n})
	}
	chunks := []resc.Chunk{sel[0], sel[1].One(), sel[1].One()}
	for i := range p {
		p[i].Chunk = chunks[i]
	}
	alloc, nodefile := AllocOf(p, nil)
	host, vnode := alloc.ExecHost(), alloc.ExecVnode()
	if host != "a/0*2+a/1+b/0" {
		t.Errorf("exec_host %q", host)
	}
	if vnode != "(a:ncpus=2:mem=1gb)+(a:ncpus=1)+(b:ncpus=1)" {
		t.Errorf("exec_vnode %q", vnode)
	}
	if strings.Join(nodefile, ",") != "a,a,a,b,b" {
		t.Errorf("nodefile %v", nodefile)
	}
	want := []Assigned{
		{Node: "a", Amounts: resc.Amounts{"ncpus": 2, "mem": 1 << 30}},
		{Node: "a", Amounts: resc.Amounts{"ncpus": 1}},
		{Node: "b", Amounts: resc.Amounts{"ncpus": 1}},
	}
	if got := ParseAssigned(nil, vnode); !reflect.DeepEqual(got, want) {
		t.Errorf("parsed %v, want %v", got, want)
	}
}

// First, which lists a chunk's amounts once for every node it tries,
// picks the node the general check (fits) picks: the first from start on,
// wrapping around, with the chunk's amounts free and its properties, and
// free of other jobs for an exclusive placement.
func TestFirstMatchesFits(t *testing.T) {
	t.Parallel()
	nodes := []*Node{idle(node("a", 1, 8)), busy(node("b", 4, 2, "arch", "linux")), hostIdle(node("c", 4, 16, "arch", "Linux")),
		idle(hostIdle(node("d", 8, 1))), node("e", 2, 32, "arch", "aix")}
	for _, sel := range []string{"1:ncpus=1", "1:ncpus=4", "1:ncpus=2:mem=4gb", "1:ncpus=1:arch=linux", "1:mem=16gb", "1:ncpus=16", "1:ncpus=2:arch=aix:mem=1gb"} {
		s, err := resc.ParseSelect(sel)
		if err != nil {
			t.Fatal(err)
		}
		c := s[0]
		for _, pl := range []string{"free", "excl", "exclhost"} {
			arr, err := resc.ParsePlace(pl)
			if err != nil {
				t.Fatal(err)
			}
			for start := range len(nodes) + 1 {
				want := -1
				for k := range nodes {
					i := (start%len(nodes) + k) % len(nodes)
					nd := nodes[i]
					if arr.Sharing == resc.SharingExcl && !nd.Idle || arr.Sharing == resc.SharingExclHost && !nd.HostIdle {
						continue
					}
					if fits(nd, nd.Free, nil, c) {
						want = i
						break
					}
				}
				if got := First(c, arr, nodes, start); got != want {
					t.Errorf("%s place=%s from %d: node %d, want %d", sel, pl, start, got, want)
				}
			}
		}
	}
}

// A site's resource with flag f is taken on the job's first node only:
// of 3 chunks asking lic=1 the first node needs a licence, the others
// none, and exec_vnode names it once; the job's total is one.
func TestConsumedOnFirstNode(t *testing.T) {
	t.Parallel()
	lic, err := resc.NewCustom("lic", resc.TypeLong, resc.FlagHost|resc.FlagConsumeFirst)
	if err != nil {
		t.Fatal(err)
	}
	tab := resc.NewTable([]resc.Custom{lic})
	sel, err := tab.ParseSelect("3:ncpus=1:lic=1")
	if err != nil {
		t.Fatal(err)
	}
	if got := sel.Amounts()["lic"]; got != 1 {
		t.Errorf("job total lic = %v, want 1", got)
	}
	withLic := node("a", 1, 1)
	withLic.Free["lic"] = 1
	cands := []*Node{withLic, node("b", 1, 1), node("c", 1, 1)}
	p, err := Chunks(sel, resc.Place{Arrangement: resc.ArrangeScatter}, cands, nil)
	if err != nil {
		t.Fatal(err)
	}
	alloc, _ := AllocOf(p, nil)
	vnode := alloc.ExecVnode()
	if vnode != "(a:ncpus=1:lic=1)+(b:ncpus=1)+(c:ncpus=1)" {
		t.Errorf("exec_vnode %s", vnode)
	}
	// No node has a licence: the first chunk finds none.
	if _, err := Chunks(sel, resc.Place{Arrangement: resc.ArrangeScatter}, []*Node{node("b", 1, 1), node("c", 1, 1), node("d", 1, 1)}, nil); err == nil {
		t.Error("placed without a licence on any node")
	}
}
