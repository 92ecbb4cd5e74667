// Package pbsfs is pbsfs's logic; cmd/pbsfs documents the command.
package pbsfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/sched/fairshare"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
)

const usage = "usage: pbsfs [-t | -p | -g entity | -d | -s entity usage | -r]\n"

// Main is pbsfs's whole main (cmd/pbsfs calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pbsfs:", err)
		os.Exit(2)
	}
	os.Exit(run(cfg.SchedPriv(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(dir string, args []string, stdout, stderr io.Writer) int {
	if cmdutil.Help(args, false) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	opts, rest, err := getopt.Spec{Short: "tpg:dsr"}.Parse(args)
	if err != nil || len(opts) > 1 {
		if err != nil {
			fmt.Fprintln(stderr, "pbsfs:", err)
		}
		fmt.Fprint(stderr, usage)
		return 2
	}
	op := byte('t')
	var value string
	if len(opts) == 1 {
		op, value = opts[0].Name, opts[0].Value
	}
	if (op == 's') != (len(rest) == 2) || (op != 's' && len(rest) != 0) {
		fmt.Fprint(stderr, usage)
		return 2
	}
	files, err := privdir.Load(dir, time.Local)
	if err != nil {
		fmt.Fprintln(stderr, "pbsfs:", err)
		return 1
	}
	write := op == 'd' || op == 's' || op == 'r'
	if write {
		unlock, err := privdir.Lock(dir, 0)
		if errors.Is(err, privdir.ErrLocked) {
			fmt.Fprintf(stderr, "pbsfs: pbs_sched is running (%v): stop it before changing usage, or it would overwrite the change\n", err)
			return 1
		}
		if err != nil {
			fmt.Fprintln(stderr, "pbsfs:", err)
			return 1
		}
		defer unlock()
	}
	st, err := privdir.ReadUsageFile(dir)
	if err != nil {
		fmt.Fprintln(stderr, "pbsfs:", err)
		return 1
	}
	switch op {
	case 't', 'p', 'g':
		tree := files.Groups
		if tree == nil {
			tree = schedpriv.NewTree(files.Config.UnknownShares)
		}
		v := newView(tree.Clone(), st.Entities)
		switch op {
		case 't':
			v.tree(stdout)
		case 'p':
			v.flat(stdout)
		case 'g':
			if !v.line(stdout, value) {
				fmt.Fprintf(stderr, "pbsfs: %s: no such entity in the tree or the usage\n", value)
				return 1
			}
		}
		return 0
	case 'd':
		interval, factor := files.Config.Decay()
		if interval <= 0 || factor <= 0 || factor >= 1 {
			factor = 0.5
		}
		for name, u := range st.Entities {
			st.Entities[name] = u * factor
		}
	case 's':
		u, err := strconv.ParseFloat(rest[1], 64)
		if err != nil || u < 0 {
			fmt.Fprintf(stderr, "pbsfs: usage %q is not a non-negative number\n", rest[1])
			return 2
		}
		st.Entities[rest[0]] = u
	case 'r':
		st.Entities = schedpriv.Usage{}
	}
	if err := privdir.WriteUsageFile(dir, st); err != nil {
		fmt.Fprintln(stderr, "pbsfs:", err)
		return 1
	}
	return 0
}

// view renders the tree with the standing of each entity.
type view struct {
	t     *schedpriv.Tree
	own   schedpriv.Usage
	stand *fairshare.Standing
}

func newView(t *schedpriv.Tree, usage schedpriv.Usage) *view {
	return &view{t: t, own: usage, stand: fairshare.NewStanding(t, usage)}
}

func (v *view) text(g *schedpriv.Group) string {
	return fmt.Sprintf("shares %d  of parent %.2f%%  of machine %.2f%%  usage %.0f  factor %.3f",
		g.Shares, 100*fairshare.OfParent(g), 100*g.Percentage, fairshare.SubtreeUsage(g, v.own), v.stand.Factor(g))
}

func (v *view) tree(w io.Writer) {
	var walk func(g *schedpriv.Group, depth int)
	walk = func(g *schedpriv.Group, depth int) {
		fmt.Fprintf(w, "%s%-*s %s\n", strings.Repeat("  ", depth), max(1, 24-2*depth), g.Name, v.text(g))
		for _, c := range g.Children {
			walk(c, depth+1)
		}
	}
	walk(v.t.Root, 0)
}

func (v *view) flat(w io.Writer) {
	var all []*schedpriv.Group
	v.t.Walk(func(g *schedpriv.Group) { all = append(all, g) })
	sort.SliceStable(all, func(a, b int) bool { return all[a].Name < all[b].Name })
	fmt.Fprintf(w, "%-24s %-12s %s\n", "entity", "parent", "standing")
	for _, g := range all {
		parent := "-"
		if g.Parent != nil {
			parent = g.Parent.Name
		}
		fmt.Fprintf(w, "%-24s %-12s %s\n", g.Name, parent, v.text(g))
	}
}

func (v *view) line(w io.Writer, name string) bool {
	g, ok := v.t.Lookup(name)
	if !ok {
		if _, used := v.own[name]; !used {
			return false
		}
		g = v.stand.Group(name)
	}
	parent := "-"
	if g.Parent != nil {
		parent = g.Parent.Name
	}
	fmt.Fprintf(w, "%s (parent %s): %s\n", g.Name, parent, v.text(g))
	return true
}
