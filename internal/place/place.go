// Package place puts the chunks of a select on nodes, honouring the place
// arrangement, and renders placements as exec_host, exec_vnode and
// PBS_NODEFILE lines. The server uses it to check and carry out every run
// request and schedulers use it to choose nodes, so both agree on what
// fits. It is pure: callers pass the nodes' free resources in.
package place

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gopbs/gopbs/resc"
)

// Node is what one node can still give, for placement. It is pure
// data: callers build it from node state under the server lock.
type Node struct {
	Name string
	// Avail is resources_available (manager settings over mom reports).
	Avail map[string]string
	// Free holds the unassigned amount of every consumable resource the
	// node has (ncpus, mem in bytes, ngpus, ...).
	Free map[string]float64
	// Idle: no job holds any of the node, so a job placed exclusively
	// (place=excl) may take it; HostIdle: no job holds any node of its
	// host (place=exclhost). A node held exclusively by a job shows
	// nothing Free to the others.
	Idle, HostIdle bool
}

// Placement is one chunk on one node.
type Placement struct {
	Node  string
	Chunk resc.Chunk // Count 1
}

// Chunks places every chunk of sel on the candidate nodes, honouring the
// arrangement of place (pack: all on one node; scatter/vscatter: one chunk
// per node; free: anywhere), its sharing (excl: only on Idle nodes;
// exclhost: only on HostIdle ones) and its group (group=res: every chunk
// on nodes with the same value of res). hosts, when given (qrun -H), names
// the node of each chunk in order, or one node for all of them. Candidates are tried
// in order. It returns why when the job does not fit. The candidates'
// Free maps are not changed.
func Chunks(sel resc.Select, arrangement resc.Place, cands []*Node, hosts []string) ([]Placement, error) {
	p, _, err := ChunksFrom(sel, arrangement, cands, hosts, 0)
	return p, err
}

// ChunksFrom is Chunks trying the candidates from index start on, wrapping
// around (next fit); it also returns the index of the node of the last
// chunk, where the next search may start. A scheduler placing many jobs
// in a row keeps this cursor so that each search does not walk the nodes
// already full.
func ChunksFrom(sel resc.Select, arrangement resc.Place, cands []*Node, hosts []string, start int) ([]Placement, int, error) {
	if arrangement.Group != "" {
		return chunksGrouped(sel, arrangement, cands, hosts, start)
	}
	if len(hosts) == 0 && len(sel) == 1 && sel[0].Count == 1 {
		return oneChunk(sel[0], arrangement, cands, start)
	}
	chunks := make([]resc.Chunk, 0, sel.NodeCount())
	for _, c := range sel {
		one := c.One()
		for i := 0; i < c.Count; i++ {
			if len(chunks) > 0 {
				// Only the job's first node takes its first-node-only
				// amounts (flag f).
				chunks = append(chunks, one.Rest())
				continue
			}
			chunks = append(chunks, one)
		}
	}
	n := len(cands)
	if start < 0 || start >= n {
		start = 0
	}
	// Amounts taken so far, per node touched: the candidates' own Free
	// maps stay untouched, so a failed attempt leaves them as they were.
	taken := map[string]map[string]float64{}
	out := make([]Placement, 0, len(chunks))
	last := start
	// take places chunk ck on candidate i.
	take := func(i, ck int) bool {
		nd, c := cands[i], chunks[ck]
		switch {
		case arrangement.Sharing == resc.SharingExcl && !nd.Idle, arrangement.Sharing == resc.SharingExclHost && !nd.HostIdle:
			return false
		case !fits(nd, nd.Free, taken[nd.Name], c):
			return false
		}
		t := taken[nd.Name]
		if t == nil {
			t = map[string]float64{}
			taken[nd.Name] = t
		}
		consume(t, c)
		out = append(out, Placement{Node: nd.Name, Chunk: c})
		last = i
		return true
	}
	if len(hosts) > 0 {
		if len(hosts) != 1 && len(hosts) != len(chunks) {
			return nil, start, fmt.Errorf("%d nodes named for a job of %d chunks", len(hosts), len(chunks))
		}
		index := make(map[string]int, len(cands))
		for i, c := range cands {
			index[c.Name] = i
		}
		for k, c := range chunks {
			h := hosts[0]
			if len(hosts) > 1 {
				h = hosts[k]
			}
			i, ok := index[h]
			if !ok {
				return nil, start, fmt.Errorf("node %s is not available (unknown, down or offline)", h)
			}
			if !take(i, k) {
				if arrangement.Exclusive() {
					return nil, start, fmt.Errorf("node %s is not free of other jobs for place=%s", h, arrangement.Sharing)
				}
				return nil, start, fmt.Errorf("node %s does not have %s free", h, ChunkText(c))
			}
		}
		return out, last, nil
	}
	switch arrangement.Arrangement {
	case resc.ArrangePack:
		for k := 0; k < n; k++ {
			i := (start + k) % n
			out = out[:0]
			taken = map[string]map[string]float64{}
			ok := true
			for ck := range chunks {
				if !take(i, ck) {
					ok = false
					break
				}
			}
			if ok {
				return out, last, nil
			}
		}
		return nil, start, noRoomPack(len(chunks))
	case resc.ArrangeScatter, resc.ArrangeVScatter:
		used := map[string]bool{}
		for ck, c := range chunks {
			found := false
			for k := 0; k < n; k++ {
				i := (start + k) % n
				if !used[cands[i].Name] && take(i, ck) {
					used[cands[i].Name] = true
					found = true
					break
				}
			}
			if !found {
				return nil, start, noRoomScatter(len(chunks), c)
			}
		}
		return out, last, nil
	}
	cur := start
	for ck, c := range chunks {
		found := false
		for k := 0; k < n; k++ {
			i := (cur + k) % n
			if take(i, ck) {
				cur = i
				found = true
				break
			}
		}
		if !found {
			return nil, start, noRoomFree(c)
		}
	}
	return out, last, nil
}

// oneChunk is ChunksFrom for a job of one chunk, placed the way every
// arrangement places one chunk: on the first candidate from start that
// may take it. A scheduler asks this of most jobs, many times a cycle.
func oneChunk(c resc.Chunk, arrangement resc.Place, cands []*Node, start int) ([]Placement, int, error) {
	if i := First(c, arrangement, cands, start); i >= 0 {
		return []Placement{{Node: cands[i].Name, Chunk: c}}, i, nil
	}
	if start < 0 || start >= len(cands) {
		start = 0
	}
	switch arrangement.Arrangement {
	case resc.ArrangePack:
		return nil, start, noRoomPack(1)
	case resc.ArrangeScatter, resc.ArrangeVScatter:
		return nil, start, noRoomScatter(1, c)
	}
	return nil, start, noRoomFree(c)
}

// First is where ChunksFrom places a job of the one chunk c (no group,
// no nodes named): the index of the first candidate from start on,
// wrapping around, that may take it; -1 when none may. A scheduler trying
// many jobs a cycle asks this and needs no reason.
func First(c resc.Chunk, arrangement resc.Place, cands []*Node, start int) int {
	n := len(cands)
	if start < 0 || start >= n {
		start = 0
	}
	// What the chunk takes, listed once for every node tried (as fits
	// reads it: its positive amounts).
	var buf [8]amount
	want := buf[:0]
	for r, v := range c.Amounts {
		if v > 0 {
			want = append(want, amount{r, v})
		}
	}
	for k := 0; k < n; k++ {
		i := (start + k) % n
		nd := cands[i]
		switch {
		case arrangement.Sharing == resc.SharingExcl && !nd.Idle, arrangement.Sharing == resc.SharingExclHost && !nd.HostIdle:
			continue
		case !fitsListed(nd, want, c):
			continue
		}
		return i
	}
	return -1
}

// amount is one resource a chunk takes.
type amount struct {
	name string
	v    float64
}

// fitsListed is fits with nothing taken yet and the chunk's amounts
// listed.
func fitsListed(n *Node, want []amount, c resc.Chunk) bool {
	for _, a := range want {
		if n.Free[a.name] < a.v {
			return false
		}
	}
	return hasProps(n, c)
}

// Why chunks found no room. A scheduler asks where jobs fit far more often
// than it reads why they do not: the message is written when read.
func noRoomPack(chunks int) error {
	return lazyError(func() string { return fmt.Sprintf("no single node has room for all %d chunks (place=pack)", chunks) })
}

func noRoomScatter(chunks int, c resc.Chunk) error {
	return lazyError(func() string {
		return fmt.Sprintf("not enough nodes for %d chunks of %s on separate nodes", chunks, ChunkText(c))
	})
}

func noRoomFree(c resc.Chunk) error {
	return lazyError(func() string { return fmt.Sprintf("no node has %s free", ChunkText(c)) })
}

// lazyError is an error whose message is made when asked for.
type lazyError func() string

func (e lazyError) Error() string { return e() }

// chunksGrouped places the chunks on nodes that share one value of the
// group resource (place=group=res): each group in turn, in the order its
// first node comes from start; nodes without the resource are no group's.
func chunksGrouped(sel resc.Select, arrangement resc.Place, cands []*Node, hosts []string, start int) ([]Placement, int, error) {
	res := arrangement.Group
	arrangement.Group = ""
	n := len(cands)
	if start < 0 || start >= n {
		start = 0
	}
	var order []string
	members := map[string][]int{}
	for k := 0; k < n; k++ {
		i := (start + k) % n
		v, ok := cands[i].Avail[res]
		if !ok {
			continue
		}
		if _, seen := members[v]; !seen {
			order = append(order, v)
		}
		members[v] = append(members[v], i)
	}
	var last error
	for _, v := range order {
		sub := make([]*Node, len(members[v]))
		for k, i := range members[v] {
			sub[k] = cands[i]
		}
		p, l, err := ChunksFrom(sel, arrangement, sub, hosts, 0)
		if err == nil {
			return p, members[v][l], nil
		}
		last = err
	}
	if last == nil {
		return nil, start, fmt.Errorf("no node has %s (place=group=%s)", res, res)
	}
	return nil, start, fmt.Errorf("no group of nodes with one value of %s has room (place=group=%s): %v", res, res, last)
}

// fits checks one chunk against one node: what it has free, less what
// this placement has taken from it already, and the properties it must
// have.
func fits(n *Node, free, taken map[string]float64, c resc.Chunk) bool {
	for r, want := range c.Amounts {
		if want > 0 && free[r]-taken[r] < want {
			return false
		}
	}
	return hasProps(n, c)
}

// hasProps reports whether node n has the properties chunk c asks for.
func hasProps(n *Node, c resc.Chunk) bool {
	for _, p := range c.Props {
		if have, ok := n.Avail[p.Name]; !p.Matches(have, ok) {
			return false
		}
	}
	return true
}

// consume adds a chunk's amounts to taken.
func consume(taken map[string]float64, c resc.Chunk) {
	for r, v := range c.Amounts {
		taken[r] += v
	}
}

// Consume subtracts a placement's amounts from the nodes' free maps
// (free[node][resource]), for callers that keep their own ledger.
func Consume(free map[string]map[string]float64, p []Placement) {
	for _, pc := range p {
		f := free[pc.Node]
		if f == nil {
			continue
		}
		t := map[string]float64{}
		consume(t, pc.Chunk)
		for r, v := range t {
			f[r] -= v
		}
	}
}

// ChunkText is one chunk as a select part without its count
// ("ncpus=2:mem=1gb").
func ChunkText(c resc.Chunk) string {
	s := resc.Select{c.One()}.String()
	return strings.TrimPrefix(s, "1:")
}

// AllocOf is a placement as the job holds it (resc.Alloc, which renders
// exec_host and exec_vnode), and its PBS_NODEFILE lines (each chunk's
// host once per MPI process). host names the node whose mom runs a
// vnode's part (nil: every node is its own): exec_host and the nodefile
// name those, exec_vnode the vnodes, as in OpenPBS. Each chunk names what
// it takes from its node, as its table read it, with one cpu when it
// names none.
func AllocOf(p []Placement, host func(node string) string) (resc.Alloc, []string) {
	if host == nil {
		host = func(n string) string { return n }
	}
	alloc := make(resc.Alloc, 0, len(p))
	var nodefile []string
	for _, pc := range p {
		hn := host(pc.Node)
		h := resc.Held{Vnode: pc.Node, Host: hn, Ncpus: pc.Chunk.Ncpus()}
		if _, ok := pc.Chunk.Get("ncpus"); !ok {
			h.Resources = append(h.Resources, resc.Pair{Name: "ncpus", Value: "1"})
		}
		for _, r := range pc.Chunk.Resources {
			if _, amount := pc.Chunk.Amounts[r.Name]; amount {
				h.Resources = append(h.Resources, r)
			}
		}
		alloc = append(alloc, h)
		for i, procs := int64(0), pc.Chunk.MPIProcs(); i < procs; i++ {
			nodefile = append(nodefile, hn)
		}
	}
	return alloc, nodefile
}

// Assigned is one chunk of a running job on its node: what it takes there.
type Assigned struct {
	Node    string
	Amounts resc.Amounts // its consumable numeric amounts
}

// AssignedOf is what each chunk of an allocation takes from its vnode,
// typed by rt.
func AssignedOf(rt *resc.Table, a resc.Alloc) []Assigned {
	if len(a) == 0 {
		return nil
	}
	amounts := a.Amounts(rt)
	out := make([]Assigned, len(a))
	for i, h := range a {
		out[i] = Assigned{Node: h.Vnode, Amounts: amounts[i]}
	}
	return out
}

// ParseExecVnode reads exec_vnode text the server did not write (a
// reservation's nodes, as the scheduler wrote them) into its chunks, in
// order, with their consumable numeric amounts read as their types in rt:
// a part naming no node, a field that is not name=value and a consumable
// that is no amount are errors.
func ParseExecVnode(rt *resc.Table, s string) ([]Assigned, error) {
	var out []Assigned
	for _, p := range resc.SplitExecVnode(s) {
		if p.Node == "" {
			return nil, fmt.Errorf("a part names no node")
		}
		for fields := p.Spec; fields != ""; {
			var f string
			f, fields, _ = strings.Cut(fields, ":")
			if _, _, ok := strings.Cut(f, "="); !ok {
				return nil, fmt.Errorf("%q is not name=value", f)
			}
		}
		pairs := resc.SpecPairs(p.Spec)
		for _, pr := range pairs {
			if !rt.Consumable(pr.Name) {
				continue
			}
			if _, numeric := rt.Number(pr.Name, pr.Value); !numeric {
				return nil, fmt.Errorf("%s=%s is not an amount", pr.Name, pr.Value)
			}
		}
		a := resc.Alloc{{Vnode: p.Node, Host: p.Node, Resources: pairs}}
		out = append(out, AssignedOf(rt, a)...)
	}
	return out, nil
}

// ParseAssigned is ParseExecVnode for exec_vnode text the server wrote
// itself and sent before the typed allocation (a mom's reading of an
// older server's start): what does not read is left out.
func ParseAssigned(rt *resc.Table, s string) []Assigned {
	return AssignedOf(rt, resc.ParseAlloc("", s))
}

// SortByName orders candidate nodes by name, for a deterministic placement.
func SortByName(c []*Node) {
	sort.Slice(c, func(i, j int) bool { return c[i].Name < c[j].Name })
}
