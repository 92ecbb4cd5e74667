package fairshare

import (
	"container/heap"
	"maps"
	"math"
	"sort"

	"github.com/gopbs/gopbs/sched/core"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// Standing is where each entity of the tree stands against its share:
// its usage (its own plus its subtree's, one unit added so that nobody
// divides by zero) against its percentage of the machine.
type Standing struct {
	tree  *schedpriv.Tree
	usage map[*schedpriv.Group]float64
}

// NewStanding computes the standing of every group of tree under usage.
// Users in usage but not in the tree are added under unknown (the tree is
// the caller's and changes: pass a clone to keep the original).
func NewStanding(tree *schedpriv.Tree, usage schedpriv.Usage) *Standing {
	s := &Standing{tree: tree, usage: map[*schedpriv.Group]float64{}}
	var missing []string
	for name := range usage {
		if _, ok := tree.Lookup(userKey(name)); !ok {
			missing = append(missing, userKey(name))
		}
	}
	sort.Strings(missing) // the same tree whatever the map's order
	tree.AddUnknowns(missing)
	own := map[*schedpriv.Group]float64{}
	for name, v := range usage {
		own[s.Group(name)] = v
	}
	var sum func(g *schedpriv.Group) float64
	sum = func(g *schedpriv.Group) float64 {
		u := 1 + own[g]
		for _, c := range g.Children {
			u += sum(c)
		}
		s.usage[g] = u
		return u
	}
	sum(tree.Root)
	return s
}

// Group is the tree node of an entity, added under unknown when the file
// does not name it. A user called like the tree's own groups (root,
// unknown) is a user under unknown all the same, not the group.
func (s *Standing) Group(name string) *schedpriv.Group {
	name = userKey(name)
	if g, ok := s.tree.Lookup(name); ok {
		return g
	}
	g := s.tree.AddUnknown(name)
	s.usage[g] = 1
	for p := g.Parent; p != nil; p = p.Parent {
		s.usage[p]++
	}
	return g
}

// reservedSuffix renames, inside a Standing, users whose names are those
// of the groups the scheduler adds.
const reservedSuffix = " (user)"

// userKey is the tree name of a user.
func userKey(name string) string {
	if name == schedpriv.RootGroup || name == schedpriv.UnknownGroup {
		return name + reservedSuffix
	}
	return name
}

// Usage is a group's usage with its subtree's.
func (s *Standing) Usage(g *schedpriv.Group) float64 { return s.usage[g] }

// Factor is a group's share of the machine over its share of the usage:
// above 1 it has used less than its share, below 1 more. Siblings compare
// by it (the tree's ranking at each level).
func (s *Standing) Factor(g *schedpriv.Group) float64 {
	root := s.usage[s.tree.Root]
	u := s.usage[g]
	if root <= 0 || u <= 0 {
		return 0
	}
	return g.Percentage / (u / root)
}

// TreeUsage is a group's usage as OpenPBS's job sort formula reads it
// (fairshare_tree_usage), between 0 and 1: its fraction of the machine's
// usage, moved toward its parent's tree usage by the fraction of the
// parent it is entitled to, from the root down. A user who used little in
// a group that used much is thus not taken for a light user of the whole
// machine, just as Order's walk down the tree does not take them for one.
func (s *Standing) TreeUsage(g *schedpriv.Group) float64 {
	root := s.usage[s.tree.Root]
	if g.Parent == nil || root <= 0 {
		return 1
	}
	own := s.usage[g] / root
	if g.Parent.Parent == nil {
		return own
	}
	entitled := 0.0 // of the parent: shares over the siblings' shares
	if g.Parent.Percentage > 0 {
		entitled = g.Percentage / g.Parent.Percentage
	}
	return own + (s.TreeUsage(g.Parent)-own)*entitled
}

// FormulaFactor is an entity's fairshare_factor for the job sort
// formula: 2^-(tree usage / percentage), between 0 and 1. An entity using
// exactly its percentage of the machine gets 0.5, one using nothing
// nearer 1, one far above its share nearer 0; an entity without shares
// gets 0.
func (s *Standing) FormulaFactor(name string) float64 {
	g := s.Group(name)
	if g.Percentage <= 0 {
		return 0
	}
	return math.Exp2(-s.TreeUsage(g) / g.Percentage)
}

// charge adds expected usage to a group and its ancestors.
func (s *Standing) charge(g *schedpriv.Group, v float64) {
	for ; g != nil; g = g.Parent {
		s.usage[g] += v
	}
}

// Order arranges jobs for fair share: again and again, from the root
// down, the branch furthest below its share (highest Factor; the earlier
// sibling on a tie) that still has jobs, until a user; that user's next
// job (jobs of one user keep their order in jobs) goes next, and the user
// is charged expected(job), so that the next pick sees it. The standing
// is as it was afterwards (the charges are this order's only).
func (s *Standing) Order(jobs []*core.Job, expected func(*core.Job) float64) []*core.Job {
	if len(jobs) < 2 {
		return jobs
	}
	byGroup := map[*schedpriv.Group][]*core.Job{}
	for _, j := range jobs {
		g := s.Group(entity(j))
		byGroup[g] = append(byGroup[g], j)
	}
	saved := maps.Clone(s.usage)
	defer func() { s.usage = saved }()
	// pending counts the jobs left in each subtree; each group with
	// pending children keeps them in a heap by factor.
	pending := map[*schedpriv.Group]int{}
	for g, js := range byGroup {
		for a := g; a != nil; a = a.Parent {
			pending[a] += len(js)
		}
	}
	heaps := map[*schedpriv.Group]*childHeap{}
	for g := range pending {
		if g.Parent == nil {
			continue
		}
		h := heaps[g.Parent]
		if h == nil {
			h = &childHeap{s: s, order: map[*schedpriv.Group]int{}, pos: map[*schedpriv.Group]int{}}
			for i, c := range g.Parent.Children {
				h.order[c] = i
			}
			heaps[g.Parent] = h
		}
		h.pos[g] = len(h.items)
		h.items = append(h.items, g)
	}
	for _, h := range heaps {
		heap.Init(h)
	}
	out := make([]*core.Job, 0, len(jobs))
	for len(out) < len(jobs) {
		g := s.tree.Root
		var path []*schedpriv.Group
		for {
			path = append(path, g)
			// A group that is also a user with jobs of its own takes them
			// before descending (the file names few such).
			if len(byGroup[g]) > 0 {
				break
			}
			h := heaps[g]
			if h == nil || h.Len() == 0 {
				break
			}
			g = h.items[0]
		}
		js := byGroup[g]
		if len(js) == 0 {
			break // cannot happen: pending counts say there are jobs
		}
		j := js[0]
		byGroup[g] = js[1:]
		out = append(out, j)
		s.charge(g, max(expected(j), 0))
		// Update counts and heap positions from the user up.
		for i := len(path) - 1; i >= 1; i-- {
			c, parent := path[i], path[i-1]
			pending[c]--
			h := heaps[parent]
			pos := h.pos[c]
			if pending[c] == 0 {
				heap.Remove(h, pos)
			} else {
				heap.Fix(h, pos)
			}
		}
	}
	return out
}

// childHeap orders the children of one group with jobs left: highest
// factor first, then file order. pos tracks where each child is.
type childHeap struct {
	s     *Standing
	items []*schedpriv.Group
	order map[*schedpriv.Group]int
	pos   map[*schedpriv.Group]int
}

func (h *childHeap) Len() int { return len(h.items) }
func (h *childHeap) Less(a, b int) bool {
	fa, fb := h.s.Factor(h.items[a]), h.s.Factor(h.items[b])
	if fa != fb {
		return fa > fb
	}
	return h.order[h.items[a]] < h.order[h.items[b]]
}
func (h *childHeap) Swap(a, b int) {
	h.items[a], h.items[b] = h.items[b], h.items[a]
	h.pos[h.items[a]], h.pos[h.items[b]] = a, b
}
func (h *childHeap) Push(x any) {
	g := x.(*schedpriv.Group)
	h.pos[g] = len(h.items)
	h.items = append(h.items, g)
}
func (h *childHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.pos, x)
	return x
}
