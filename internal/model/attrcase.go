package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gopbs/gopbs/proto"
)

// Attribute names are compared without case, as OpenPBS's attribute
// index compares them: admins write "set queue workq priority = 50" and
// "set server Scheduling = True". A request's names are brought to their
// canonical spelling once, where the server decodes it (Canonical*), so
// that everything past that edge stores, compares and prints the one
// spelling.

// foldIndex maps each name in lower case to its canonical spelling.
type foldIndex map[string]string

// newFoldIndex indexes names; two that differ only in case would make
// the fold ambiguous, and are a defect of the tables.
func newFoldIndex(names ...string) foldIndex {
	f := make(foldIndex, len(names))
	for _, n := range names {
		k := strings.ToLower(n)
		if prev, ok := f[k]; ok && prev != n {
			panic(fmt.Sprintf("attribute names %q and %q differ only in case", prev, n))
		}
		f[k] = n
	}
	return f
}

// alias makes name (in any case) read as canonical.
func (f foldIndex) alias(name, canonical string) {
	k := strings.ToLower(name)
	if prev, ok := f[k]; ok && prev != canonical {
		panic(fmt.Sprintf("alias %q is attribute %q", name, prev))
	}
	f[k] = canonical
}

// canonical is name's canonical spelling, or name itself when no name
// of the index matches it in any case (the caller then refuses it).
func (f foldIndex) canonical(name string) string {
	if c, ok := f[strings.ToLower(name)]; ok {
		return c
	}
	return name
}

// canonicalAll rewrites every name of attrs in place.
func (f foldIndex) canonicalAll(attrs []proto.Attr) {
	for i := range attrs {
		attrs[i].Name = f.canonical(attrs[i].Name)
	}
}

// CanonicalAttrs brings the names of attrs for an object of table t to
// their canonical spelling, in place.
func (t *DefTable) CanonicalAttrs(attrs []proto.Attr) { t.fold.canonicalAll(attrs) }

// jobFold indexes every job attribute a request may name: those of the
// table, those only passed through and those refused with a reason.
var jobFold = func() foldIndex {
	var names []string
	for _, a := range jobAttrs {
		names = append(names, a.name)
	}
	for n := range passThrough {
		names = append(names, n)
	}
	for n := range refused {
		names = append(names, n)
	}
	return newFoldIndex(names...)
}()

// CanonicalJobAttrs brings the names of a job request's attributes
// (qsub, qalter, a filter's rewrite, qselect's criteria) to their
// canonical spelling, in place.
func CanonicalJobAttrs(attrs []proto.Attr) { jobFold.canonicalAll(attrs) }

// CanonicalJobAttr is one job attribute name's canonical spelling.
func CanonicalJobAttr(name string) string { return jobFold.canonical(name) }

// resvFold indexes the attributes a reservation request may name.
var resvFold = newFoldIndex(proto.AttrResvStart, proto.AttrResvEnd, proto.AttrResvDuration, proto.AttrResourceList,
	proto.AttrResvName, proto.AttrAuthUsers, proto.AttrAuthGroups, proto.AttrAuthHosts, proto.AttrMailPoints,
	proto.AttrMailUsers, proto.AttrResvRrule, proto.AttrResvTimezone, proto.AttrResvStanding, proto.AttrVariableList)

// CanonicalResvAttrs brings the names of a reservation request's
// attributes (pbs_rsub, pbs_ralter) to their canonical spelling.
func CanonicalResvAttrs(attrs []proto.Attr) { resvFold.canonicalAll(attrs) }

// CanonicalResvAttr is name's canonical spelling, as a reservation's.
func CanonicalResvAttr(name string) string { return resvFold.canonical(name) }

// ResvSettable are the attributes a reservation request may name: what
// a resvsub or modifyresv hook may set.
func ResvSettable() []string {
	out := make([]string, 0, len(resvFold))
	for _, n := range resvFold {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
