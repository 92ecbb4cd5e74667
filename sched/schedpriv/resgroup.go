package schedpriv

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// Names of the two groups every fair-share tree has.
const (
	RootGroup    = "root"
	UnknownGroup = "unknown"
)

// Group is one node of the fair-share tree: a user or a group of
// resource_group, or root or unknown.
type Group struct {
	Name     string
	ID       int // cresgrp from the file; -1 for root, unknown and added users
	Shares   int
	Parent   *Group // nil for root
	Children []*Group
	// Percentage is this node's share of the whole machine:
	// Shares / (sum of Shares of it and its siblings) * parent's Percentage.
	// Root is 1.
	Percentage float64
	// Line is where the file defined the group; 0 for root, unknown and
	// users added with AddUnknown.
	Line int
}

// Tree is the fair-share tree of a resource_group file. It is a plain value
// owned by its caller: AddUnknown changes it in place and nothing here
// locks, so a scheduler that shares a tree between goroutines guards it (or
// gives each its own Clone).
type Tree struct {
	Root    *Group
	Unknown *Group
	// Warnings are findings that did not stop the file from being used.
	Warnings []Problem

	byName map[string]*Group
}

// NewTree returns the tree of an empty resource_group: root with the single
// child unknown holding unknownShares.
func NewTree(unknownShares int) *Tree {
	root := &Group{Name: RootGroup, ID: -1, Percentage: 1}
	unknown := &Group{Name: UnknownGroup, ID: -1, Shares: unknownShares, Parent: root}
	root.Children = []*Group{unknown}
	t := &Tree{Root: root, Unknown: unknown, byName: map[string]*Group{RootGroup: root, UnknownGroup: unknown}}
	t.recompute(root)
	return t
}

// ParseResourceGroup reads a resource_group file into a tree whose unknown
// group has unknownShares (sched_config's unknown_shares). name is used in
// messages. On error it returns nil and an Errors listing every problem.
//
// Each line is "name cresgrp parent shares" (white-space separated; '#' and
// '*' lines are comments). cresgrp is a non-negative integer unique in the
// file, shares a non-negative integer. parent is root, unknown or a group
// defined on an earlier line: a parent that is not (yet) defined is an
// error, where the classic scheduler quietly created it under unknown with
// one share, hiding typos and ordering mistakes. Children keep file order.
func ParseResourceGroup(r io.Reader, name string, unknownShares int) (*Tree, error) {
	t := NewTree(unknownShares)
	rep := report{file: name}
	ids := map[int]int{} // cresgrp -> line
	eachLine(r, &rep, func(n int, line string) {
		if isComment(line) {
			return
		}
		w := fields(line)
		if len(w) < 4 {
			rep.errorf(n, "want \"name cresgrp parent shares\", got %d field(s)", len(w))
			return
		}
		if len(w) > 4 && !trailingComment(w[4:]) {
			rep.errorf(n, "unexpected %q after the shares", w[4])
			return
		}
		gname, idText, pname, shareText := w[0], w[1], w[2], w[3]
		bad := false
		id, err := parseCount(idText)
		if err != nil {
			rep.errorf(n, "%s: cresgrp %q is not a non-negative integer", gname, idText)
			bad = true
		} else if prev, dup := ids[id]; dup {
			rep.errorf(n, "%s: cresgrp %d is already used on line %d", gname, id, prev)
			bad = true
		}
		shares, err := parseCount(shareText)
		if err != nil {
			rep.errorf(n, "%s: shares %q is not a non-negative integer", gname, shareText)
			bad = true
		}
		if gname == RootGroup || gname == UnknownGroup {
			rep.errorf(n, "%q is reserved and cannot be defined", gname)
			bad = true
		} else if prev, dup := t.byName[gname]; dup {
			rep.errorf(n, "%s is already defined on line %d", gname, prev.Line)
			bad = true
		}
		parent, ok := t.byName[pname]
		if !ok {
			rep.errorf(n, "%s: parent %q is not defined on an earlier line (define parents before their members)", gname, pname)
			bad = true
		}
		if bad {
			return
		}
		ids[id] = n
		g := &Group{Name: gname, ID: id, Shares: shares, Parent: parent, Line: n}
		parent.Children = append(parent.Children, g)
		t.byName[gname] = g
	})
	if err := rep.err(); err != nil {
		return nil, err
	}
	t.recompute(t.Root)
	t.Warnings = rep.warnings
	return t, nil
}

// recompute sets the percentages of g's descendants from g's own.
func (t *Tree) recompute(g *Group) {
	// Summed as float64: share counts are read as arbitrary integers and an
	// integer sum could overflow.
	sum := 0.0
	for _, c := range g.Children {
		sum += float64(c.Shares)
	}
	for _, c := range g.Children {
		if sum > 0 {
			c.Percentage = float64(c.Shares) / sum * g.Percentage
		} else {
			// No shares among the siblings: none of them is entitled to
			// anything (and nothing is divided by zero).
			c.Percentage = 0
		}
		t.recompute(c)
	}
}

// Lookup returns the group or user of that name.
func (t *Tree) Lookup(name string) (*Group, bool) {
	g, ok := t.byName[name]
	return g, ok
}

// AddUnknown returns the node for name, creating it under unknown with one
// share when the file does not know it (a user with no entry), and then
// recomputing the percentages of unknown's members. It changes t.
func (t *Tree) AddUnknown(name string) *Group {
	if g, ok := t.byName[name]; ok {
		return g
	}
	g := &Group{Name: name, ID: -1, Shares: 1, Parent: t.Unknown}
	t.Unknown.Children = append(t.Unknown.Children, g)
	t.byName[name] = g
	t.recompute(t.Unknown)
	return g
}

// AddUnknowns is AddUnknown for many names at once, recomputing the
// percentages once (a fair-share pass adds every user with usage; one
// recomputation per user would cost the square of their number).
func (t *Tree) AddUnknowns(names []string) {
	added := false
	for _, name := range names {
		if _, ok := t.byName[name]; ok {
			continue
		}
		g := &Group{Name: name, ID: -1, Shares: 1, Parent: t.Unknown}
		t.Unknown.Children = append(t.Unknown.Children, g)
		t.byName[name] = g
		added = true
	}
	if added {
		t.recompute(t.Unknown)
	}
}

// Walk calls fn for every node, parents before their children, in file
// order, starting with root.
func (t *Tree) Walk(fn func(g *Group)) {
	var walk func(g *Group)
	walk = func(g *Group) {
		fn(g)
		for _, c := range g.Children {
			walk(c)
		}
	}
	walk(t.Root)
}

// Len is the number of nodes, root and unknown included.
func (t *Tree) Len() int { return len(t.byName) }

// Clone returns a deep copy sharing nothing with t.
func (t *Tree) Clone() *Tree {
	c := &Tree{Warnings: append([]Problem(nil), t.Warnings...), byName: make(map[string]*Group, len(t.byName))}
	var cp func(g, parent *Group) *Group
	cp = func(g, parent *Group) *Group {
		n := *g
		n.Parent = parent
		n.Children = make([]*Group, len(g.Children))
		for i, ch := range g.Children {
			n.Children[i] = cp(ch, &n)
		}
		c.byName[n.Name] = &n
		return &n
	}
	c.Root = cp(t.Root, nil)
	c.Unknown = c.byName[UnknownGroup]
	return c
}

// Format writes the groups defined by the file (not root, unknown or users
// added with AddUnknown) so that ParseResourceGroup reads back the same
// tree: parents before members.
func (t *Tree) Format(w io.Writer) error {
	bw := bufio.NewWriter(w)
	t.Walk(func(g *Group) {
		if g.Parent == nil || g == t.Unknown || g.ID < 0 {
			return
		}
		fmt.Fprintf(bw, "%s\t%s\t%s\t%d\n", g.Name, strconv.Itoa(g.ID), g.Parent.Name, g.Shares)
	})
	return bw.Flush()
}
