package resc

import (
	"sort"
	"strconv"
	"strings"
)

// Chunk is one "+"-separated part of a select: Count copies of the same
// host-level resource request. Resources is the chunk as written; the
// other fields are derived from it once, when the chunk is made
// (ParseSelect, ParseNodes, NewChunk, With), so that placing a chunk on a
// node compares numbers and never parses: build chunks with those, not as
// literals.
type Chunk struct {
	Count int
	// Max is the most copies of an elastic chunk spec ("2-8:ncpus=4":
	// Count 2, Max 8); 0 for a fixed count. A job holds between Count
	// and Max copies; what it holds is its exec_vnode, and the
	// calendar counts the minimum (Count).
	Max       int
	Resources []Pair // in the order given, canonical values
	// Amounts is what one copy takes from its node: its consumable
	// numeric resources, and one cpu when it names no ncpus.
	Amounts Amounts
	// Settings are numeric per-process values that take nothing from the
	// node (mpiprocs, ompthreads).
	Settings Amounts
	// Props are the values the node must have (arch=linux, host=n1, a
	// site's string, string_array or boolean resource), each matched as
	// its type (Prop.Matches).
	Props []Prop
	// First names the amounts taken on the job's first node only (a
	// site's resources with flag f): the job's first copy of its first
	// chunk takes them, the other copies do not (Rest).
	First []string
	// defs is the table the chunk was made with, for With.
	defs *Table
}

// NewChunk makes a chunk of count copies of built-in resources
// (Table.NewChunk of the built-ins alone).
func NewChunk(count int, resources []Pair) Chunk { return (*Table)(nil).NewChunk(count, resources) }

// NewChunk makes a chunk of count copies of resources (canonical values),
// with its typed fields: a consumable's amount, a built-in setting's
// number, and what else the node must match, with its type.
func (t *Table) NewChunk(count int, resources []Pair) Chunk {
	c := Chunk{Count: count, Resources: resources, Amounts: Amounts{}, defs: t}
	ncpus := false
	for _, p := range resources {
		v, numeric := t.Number(p.Name, p.Value)
		_, custom := t.Custom(p.Name)
		counted := t.counts(p.Name)
		switch {
		case numeric && t.Consumable(p.Name) && !counted:
		case numeric && t.Consumable(p.Name):
			c.Amounts[p.Name] = v
			ncpus = ncpus || p.Name == "ncpus"
			if d, ok := t.Custom(p.Name); ok && d.Flags&FlagConsumeFirst != 0 {
				c.First = append(c.First, p.Name)
			}
		case numeric && !custom:
			if c.Settings == nil {
				c.Settings = Amounts{}
			}
			c.Settings[p.Name] = v
		case counted:
			c.Props = append(c.Props, Prop{Pair: p, Type: t.Lookup(p.Name).Type})
		}
	}
	if !ncpus && t.counts("ncpus") {
		c.Amounts["ncpus"] = 1 // as PBS counts a chunk that names no cpus
	}
	return c
}

// With is c with resource name set to value (a canonical value) when c
// does not name it already (default_chunk).
func (c Chunk) With(name, value string) Chunk {
	if _, ok := c.Get(name); ok {
		return c
	}
	rs := make([]Pair, len(c.Resources), len(c.Resources)+1)
	copy(rs, c.Resources)
	out := c.defs.NewChunk(c.Count, append(rs, Pair{name, value}))
	out.Max = c.Max
	return out
}

// Rest is a copy of c for any node of the job but its first: without the
// amounts taken on the first node only (First).
func (c Chunk) Rest() Chunk {
	if len(c.First) == 0 {
		return c
	}
	am := make(Amounts, len(c.Amounts))
	for r, v := range c.Amounts {
		am[r] = v
	}
	for _, r := range c.First {
		delete(am, r)
	}
	c.Amounts, c.First = am, nil
	return c
}

// One is a single copy of c.
func (c Chunk) One() Chunk {
	c.Count, c.Max = 1, 0
	return c
}

// Ncpus is the cpus one copy takes.
func (c Chunk) Ncpus() int64 { return int64(c.Amounts["ncpus"]) }

// MPIProcs is the MPI processes of one copy (PBS_NODEFILE lines): its
// mpiprocs, 1 when it names none.
func (c Chunk) MPIProcs() int64 {
	if v, ok := c.Settings["mpiprocs"]; ok {
		return int64(v)
	}
	return 1
}

// Pair is one resource=value.
type Pair struct {
	Name  string
	Value string
}

// Get returns the value of resource name in the chunk.
func (c Chunk) Get(name string) (string, bool) {
	for _, p := range c.Resources {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// Select is a parsed select spec.
type Select []Chunk

// maxChunkCount bounds the count of one chunk and the number of chunks so a
// typo like select=1000000000 is an error, not an allocation.
const maxChunkCount = 1 << 20

// ParseSelect parses a select of built-in resources (Table.ParseSelect of
// the built-ins alone).
func ParseSelect(s string) (Select, error) { return (*Table)(nil).ParseSelect(s) }

// ParseSelect parses "N:res=val:res=val+..." where N defaults to 1, each
// value checked as its resource's type.
func (t *Table) ParseSelect(s string) (Select, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return nil, &Error{Value: s, Reason: "empty select"}
	}
	var sel Select
	total := 0
	for _, part := range strings.Split(text, "+") {
		if part == "" {
			return nil, &Error{Value: s, Reason: "empty chunk"}
		}
		fields := strings.Split(part, ":")
		c := Chunk{Count: 1}
		if lo, hi, isRange := strings.Cut(fields[0], "-"); isRange && !strings.Contains(fields[0], "=") {
			n, err1 := strconv.Atoi(lo)
			m, err2 := strconv.Atoi(hi)
			switch {
			case err1 != nil || err2 != nil:
				return nil, &Error{Value: s, Reason: "a chunk count range is written min-max, as 2-8"}
			case n < 1:
				return nil, &Error{Value: s, Reason: "the minimum of a chunk count range must be at least 1"}
			case m < n:
				return nil, &Error{Value: s, Reason: "chunk count range " + fields[0] + ": the minimum is above the maximum"}
			case m > maxChunkCount:
				return nil, &Error{Value: s, Reason: "chunk count must be between 1 and 1048576"}
			case sel.Elastic() >= 0:
				return nil, &Error{Value: s, Reason: "only one chunk spec of a select may have a count range"}
			}
			c.Count = n
			if m > n {
				c.Max = m
			}
			fields = fields[1:]
		} else if n, err := strconv.Atoi(fields[0]); err == nil {
			if n <= 0 || n > maxChunkCount {
				return nil, &Error{Value: s, Reason: "chunk count must be between 1 and 1048576"}
			}
			c.Count = n
			fields = fields[1:]
		} else if !strings.Contains(fields[0], "=") {
			return nil, &Error{Value: s, Reason: "chunk must start with a count or resource=value"}
		}
		for _, f := range fields {
			name, val, ok := strings.Cut(f, "=")
			if !ok || name == "" || val == "" {
				return nil, &Error{Value: s, Reason: "want resource=value in chunk, got " + strconv.Quote(f)}
			}
			if _, dup := c.Get(name); dup {
				return nil, &Error{Value: s, Reason: "resource " + name + " given twice in one chunk"}
			}
			d := t.Lookup(name)
			if !d.Chunk && t.Defined(name) {
				return nil, &Error{Value: s, Reason: "resource " + name + " is not a host-level resource and cannot be in a select"}
			}
			canon, err := t.Canonical(name, val)
			if err != nil {
				return nil, err
			}
			c.Resources = append(c.Resources, Pair{name, canon})
		}
		total += max(c.Count, c.Max)
		if total > maxChunkCount {
			return nil, &Error{Value: s, Reason: "too many chunks"}
		}
		ch := t.NewChunk(c.Count, c.Resources)
		ch.Max = c.Max
		sel = append(sel, ch)
	}
	return sel, nil
}

// Elastic is the index of the chunk spec with a count range, -1 when the
// select has none.
func (s Select) Elastic() int {
	for i, c := range s {
		if c.Max > 0 {
			return i
		}
	}
	return -1
}

// MaxNodeCount is the number of chunks at the maximum of the range (the
// NodeCount of a select without one).
func (s Select) MaxNodeCount() int {
	n := 0
	for _, c := range s {
		n += max(c.Count, c.Max)
	}
	return n
}

// AtMax is s with its count range, if any, at its maximum (fixed).
func (s Select) AtMax() Select {
	sel, _ := s.WithNodeCount(s.MaxNodeCount())
	return sel
}

// WithNodeCount is the select of one allocation of s: the ranged chunk
// spec's count set so that the whole select has n chunks (fixed). ok is
// false when n is outside s's range (s itself for a select without one
// and n its NodeCount).
func (s Select) WithNodeCount(n int) (sel Select, ok bool) {
	if n < s.NodeCount() || n > s.MaxNodeCount() {
		return nil, false
	}
	i := s.Elastic()
	if i < 0 {
		return s, true
	}
	out := make(Select, len(s))
	copy(out, s)
	out[i].Count += n - s.NodeCount()
	out[i].Max = 0
	return out, true
}

// String writes the select in canonical form ("2:ncpus=1:mem=300mb").
func (s Select) String() string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(c.Count))
		if c.Max > 0 {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c.Max))
		}
		for _, p := range c.Resources {
			b.WriteByte(':')
			b.WriteString(p.Name)
			b.WriteByte('=')
			b.WriteString(p.Value)
		}
	}
	return b.String()
}

// NodeCount is the total number of chunks.
func (s Select) NodeCount() int {
	n := 0
	for _, c := range s {
		n += c.Count
	}
	return n
}

// Totals sums the numeric host-level resources over all chunks, counting
// one cpu for a chunk that names none, as PBS does, and a count range at
// its maximum: the totals are the most the job may hold, what submission
// filters and resources_max judge (a range counted at its minimum would
// let "1-3:ncpus=40" past a limit "3:ncpus=40" meets). The result holds
// canonical values keyed by resource name: always ncpus and nodect, and
// every other numeric chunk resource that some chunk requests.
func (s Select) Totals() map[string]string {
	top := s.AtMax()
	sums := top.Sums()
	out := map[string]string{"nodect": strconv.Itoa(top.NodeCount())}
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out[n] = Format(n, sums[n])
	}
	return out
}

// Amounts are what the whole select takes from nodes: every chunk's
// amounts times its count.
func (s Select) Amounts() Amounts {
	sums := Amounts{}
	for i, c := range s {
		sums.AddTimes(c.Amounts, float64(c.Count))
		sums.takeFirst(c, i)
	}
	return sums
}

// takeFirst takes back from sums what chunk spec i's copies do not take
// of its first-node-only amounts: all of them but the job's very first.
func (a Amounts) takeFirst(c Chunk, i int) {
	for _, r := range c.First {
		n := float64(c.Count)
		if i == 0 {
			n--
		}
		a[r] -= c.Amounts[r] * n
	}
}

// Sums are the select's totals as numbers: every chunk's amounts and
// settings times its count.
func (s Select) Sums() Amounts {
	sums := Amounts{}
	for i, c := range s {
		sums.AddTimes(c.Amounts, float64(c.Count))
		sums.AddTimes(c.Settings, float64(c.Count))
		sums.takeFirst(c, i)
	}
	return sums
}

// Format writes a number of built-in resource name's type canonically
// (Table.Format of the built-ins alone).
func Format(name string, v float64) string { return formatAs(Lookup(name).Type, v) }

// formatAs writes a number of type t canonically (the inverse of
// numberAs).
func formatAs(t Type, v float64) string {
	switch t {
	case TypeSize:
		return FormatSize(int64(v))
	case TypeDuration:
		return FormatDuration(int64(v))
	case TypeFloat:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatInt(int64(v), 10)
}

// ParseNodes parses Torque's node spec "N[:prop...][:ppn=M][+...][#suffix]"
// where each part is a count or a host name, and converts it to a select:
// ppn becomes ncpus and mpiprocs, a host name becomes host=name, and a
// property becomes prop=True.
func ParseNodes(s string) (Select, error) {
	t := strings.TrimSpace(s)
	if i := strings.IndexByte(t, '#'); i >= 0 {
		t = t[:i]
	}
	if t == "" {
		return nil, &Error{Value: s, Reason: "empty node spec"}
	}
	var sel Select
	total := 0
	for _, part := range strings.Split(t, "+") {
		fields := strings.Split(part, ":")
		if fields[0] == "" {
			return nil, &Error{Value: s, Reason: "empty node spec part"}
		}
		c := Chunk{Count: 1}
		ppn := ""
		var extra []Pair
		if n, err := strconv.Atoi(fields[0]); err == nil {
			if n <= 0 || n > maxChunkCount {
				return nil, &Error{Value: s, Reason: "node count must be between 1 and 1048576"}
			}
			c.Count = n
		} else if validHostName(fields[0]) {
			extra = append(extra, Pair{"host", fields[0]})
		} else {
			return nil, &Error{Value: s, Reason: "bad node name or count " + strconv.Quote(fields[0])}
		}
		for _, f := range fields[1:] {
			name, val, hasVal := strings.Cut(f, "=")
			switch {
			case name == "ppn" || name == "procs":
				n, err := strconv.Atoi(val)
				if err != nil || n <= 0 {
					return nil, &Error{Value: s, Reason: "ppn must be a positive integer"}
				}
				ppn = strconv.Itoa(n)
			case name == "gpus":
				n, err := strconv.Atoi(val)
				if err != nil || n < 0 {
					return nil, &Error{Value: s, Reason: "gpus must be a non-negative integer"}
				}
				for _, e := range extra {
					if e.Name == "ngpus" {
						return nil, &Error{Value: s, Reason: "gpus given twice"}
					}
				}
				extra = append(extra, Pair{"ngpus", strconv.Itoa(n)})
			case !hasVal && ValidName(name) == nil && !Known(name):
				for _, e := range extra {
					if e.Name == name {
						return nil, &Error{Value: s, Reason: "node property " + strconv.Quote(name) + " given twice"}
					}
				}
				extra = append(extra, Pair{name, "True"})
			default:
				return nil, &Error{Value: s, Reason: "bad node property " + strconv.Quote(f)}
			}
		}
		if ppn == "" {
			ppn = "1"
		}
		total += c.Count
		if total > maxChunkCount {
			return nil, &Error{Value: s, Reason: "too many nodes"}
		}
		sel = append(sel, NewChunk(c.Count, append([]Pair{{"ncpus", ppn}, {"mpiprocs", ppn}}, extra...)))
	}
	return sel, nil
}

// validHostName accepts a node name of a nodes spec: a letter, then
// letters, digits, '-', '_' or '.'.
func validHostName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	c := s[0]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Arrangement is how a place spec spreads a job's chunks over nodes.
type Arrangement uint8

// Arrangements; ArrangeUnset is a spec that names none.
const (
	ArrangeUnset    Arrangement = iota
	ArrangeFree                 // anywhere
	ArrangePack                 // all on one node
	ArrangeScatter              // one chunk per node
	ArrangeVScatter             // one chunk per vnode (a node here)
)

var arrangementNames = [...]string{"", "free", "pack", "scatter", "vscatter"}

func (a Arrangement) String() string { return arrangementNames[a] }

// Sharing is whether a job shares its nodes.
type Sharing uint8

// Sharing values; SharingUnset is a spec that names none.
const (
	SharingUnset    Sharing = iota
	SharingShared           // nodes shared with other jobs
	SharingExcl             // the nodes its chunks are on, whole
	SharingExclHost         // every node of their hosts, whole
)

var sharingNames = [...]string{"", "shared", "excl", "exclhost"}

func (s Sharing) String() string { return sharingNames[s] }

// Place is a parsed place spec: arrangement free|pack|scatter|vscatter,
// sharing excl|shared|exclhost, and an optional group=resource.
type Place struct {
	Arrangement Arrangement
	Sharing     Sharing
	Group       string
}

// Exclusive reports whether a job placed with p takes its nodes whole:
// place=excl (the nodes its chunks are on) or exclhost (every node of
// their hosts).
func (p Place) Exclusive() bool { return p.Sharing == SharingExcl || p.Sharing == SharingExclHost }

// ParsePlace parses "arrangement[:sharing][:group=res]" in any order.
func ParsePlace(s string) (Place, error) {
	var p Place
	t := strings.TrimSpace(s)
	if t == "" {
		return p, &Error{Value: s, Reason: "empty place"}
	}
	for _, f := range strings.Split(t, ":") {
		if a := indexOf(arrangementNames[1:], f); a >= 0 {
			if p.Arrangement != ArrangeUnset {
				return p, &Error{Value: s, Reason: "two arrangements"}
			}
			p.Arrangement = Arrangement(a + 1)
			continue
		}
		if sh := indexOf(sharingNames[1:], f); sh >= 0 {
			if p.Sharing != SharingUnset {
				return p, &Error{Value: s, Reason: "two sharing values"}
			}
			p.Sharing = Sharing(sh + 1)
			continue
		}
		if g, ok := strings.CutPrefix(f, "group="); ok {
			// A resource's name, which the place is written back with.
			if err := ValidName(g); err != nil {
				return p, &Error{Value: s, Reason: "group=" + strconv.Quote(g) + ": " + err.(*Error).Reason}
			}
			p.Group = g
			continue
		}
		return p, &Error{Value: s, Reason: "unknown placement " + strconv.Quote(f) + " (want free, pack, scatter, vscatter, excl, shared, exclhost or group=resource)"}
	}
	return p, nil
}

func indexOf(names []string, f string) int {
	for i, n := range names {
		if n == f {
			return i
		}
	}
	return -1
}

// String writes the place spec in canonical order.
func (p Place) String() string {
	var parts []string
	if p.Arrangement != ArrangeUnset {
		parts = append(parts, p.Arrangement.String())
	}
	if p.Sharing != SharingUnset {
		parts = append(parts, p.Sharing.String())
	}
	if p.Group != "" {
		parts = append(parts, "group="+p.Group)
	}
	return strings.Join(parts, ":")
}

// MarshalText writes the placement as place= text (String), the form a
// stored record keeps it in.
func (p Place) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads place= text; empty is no placement given.
func (p *Place) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*p = Place{}
		return nil
	}
	v, err := ParsePlace(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Table is the resource table the select was parsed with (nil: the
// built-ins alone), to read more of the same job's chunks alike.
func (s Select) Table() *Table {
	if len(s) == 0 {
		return nil
	}
	return s[0].defs
}
