package resc

import (
	"sort"
	"strconv"
	"strings"
)

// Chunk is one "+"-separated part of a select: Count copies of the same
// host-level resource request.
type Chunk struct {
	Count     int
	Resources []Pair // in the order given, canonical values
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

// ParseSelect parses "N:res=val:res=val+..." where N defaults to 1.
func ParseSelect(s string) (Select, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, &Error{Value: s, Reason: "empty select"}
	}
	var sel Select
	total := 0
	for _, part := range strings.Split(t, "+") {
		if part == "" {
			return nil, &Error{Value: s, Reason: "empty chunk"}
		}
		fields := strings.Split(part, ":")
		c := Chunk{Count: 1}
		if n, err := strconv.Atoi(fields[0]); err == nil {
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
			d := Lookup(name)
			if !d.Chunk && Known(name) {
				return nil, &Error{Value: s, Reason: "resource " + name + " is not a host-level resource and cannot be in a select"}
			}
			canon, err := Canonical(name, val)
			if err != nil {
				return nil, err
			}
			c.Resources = append(c.Resources, Pair{name, canon})
		}
		total += c.Count
		if total > maxChunkCount {
			return nil, &Error{Value: s, Reason: "too many chunks"}
		}
		sel = append(sel, c)
	}
	return sel, nil
}

// String writes the select in canonical form ("2:ncpus=1:mem=300mb").
func (s Select) String() string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(c.Count))
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
// one cpu for a chunk that names none, as PBS does. The result holds
// canonical values keyed by resource name: always ncpus and nodect, and
// every other numeric chunk resource that some chunk requests.
func (s Select) Totals() map[string]string {
	sums := map[string]float64{}
	for _, c := range s {
		if _, ok := c.Get("ncpus"); !ok {
			sums["ncpus"] += float64(c.Count)
		}
		for _, p := range c.Resources {
			if v, ok := Number(p.Name, p.Value); ok {
				sums[p.Name] += v * float64(c.Count)
			}
		}
	}
	out := map[string]string{"nodect": strconv.Itoa(s.NodeCount())}
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := sums[n]
		switch Lookup(n).Type {
		case TypeSize:
			out[n] = FormatSize(int64(v))
		case TypeDuration:
			out[n] = FormatDuration(int64(v))
		case TypeFloat:
			out[n] = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			out[n] = strconv.FormatInt(int64(v), 10)
		}
	}
	return out
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
		c.Resources = append([]Pair{{"ncpus", ppn}, {"mpiprocs", ppn}}, extra...)
		total += c.Count
		if total > maxChunkCount {
			return nil, &Error{Value: s, Reason: "too many nodes"}
		}
		sel = append(sel, c)
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

// Place is a parsed place spec: arrangement free|pack|scatter|vscatter,
// sharing excl|shared|exclhost, and an optional group=resource.
type Place struct {
	Arrangement string
	Sharing     string
	Group       string
}

// ParsePlace parses "arrangement[:sharing][:group=res]" in any order.
func ParsePlace(s string) (Place, error) {
	var p Place
	t := strings.TrimSpace(s)
	if t == "" {
		return p, &Error{Value: s, Reason: "empty place"}
	}
	for _, f := range strings.Split(t, ":") {
		switch {
		case f == "free" || f == "pack" || f == "scatter" || f == "vscatter":
			if p.Arrangement != "" {
				return p, &Error{Value: s, Reason: "two arrangements"}
			}
			p.Arrangement = f
		case f == "excl" || f == "shared" || f == "exclhost":
			if p.Sharing != "" {
				return p, &Error{Value: s, Reason: "two sharing values"}
			}
			p.Sharing = f
		case strings.HasPrefix(f, "group=") && len(f) > len("group="):
			p.Group = f[len("group="):]
		default:
			return p, &Error{Value: s, Reason: "unknown placement " + strconv.Quote(f) + " (want free, pack, scatter, vscatter, excl, shared, exclhost or group=resource)"}
		}
	}
	return p, nil
}

// String writes the place spec in canonical order.
func (p Place) String() string {
	var parts []string
	for _, f := range []string{p.Arrangement, p.Sharing} {
		if f != "" {
			parts = append(parts, f)
		}
	}
	if p.Group != "" {
		parts = append(parts, "group="+p.Group)
	}
	return strings.Join(parts, ":")
}
