package fairshare

import schedpriv "github.com/gopbs/gopbs/sched/schedpriv"

// SubtreeUsage is the usage of g and everything under it, as pbsfs and
// the web page show it: own holds each entity's usage, and the tree's
// own groups (root, unknown) have none of their own. Unlike Standing's
// Usage it adds no unit per node.
func SubtreeUsage(g *schedpriv.Group, own schedpriv.Usage) float64 {
	u := own[g.Name]
	if g.Parent == nil || g.Name == schedpriv.UnknownGroup {
		u = 0
	}
	for _, c := range g.Children {
		u += SubtreeUsage(c, own)
	}
	return u
}

// OfParent is g's shares over the sum of its siblings' and its own (1
// for the root, 0 when no sibling has shares).
func OfParent(g *schedpriv.Group) float64 {
	if g.Parent == nil {
		return 1
	}
	sum := 0
	for _, c := range g.Parent.Children {
		sum += c.Shares
	}
	if sum == 0 {
		return 0
	}
	return float64(g.Shares) / float64(sum)
}
