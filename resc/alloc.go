package resc

import (
	"slices"
	"strconv"
	"strings"
)

// Alloc is what a started job holds, chunk by chunk in the order it was
// placed: the typed form of its exec_vnode and exec_host, which are
// rendered from it (ExecVnode, ExecHost) and read into it only where text
// crosses in (ParseAlloc: a store written before the typed form, a
// finished subjob's record). The first chunk's host is the mother
// superior.
type Alloc []Held

// Held is one chunk of an allocation.
type Held struct {
	// Vnode is the vnode the chunk is on (exec_vnode's node).
	Vnode string
	// Host is the node whose mom runs the chunk (exec_host's): Vnode
	// itself, or the mom's node of a multi-vnode host.
	Host string
	// Ncpus is the cpus exec_host counts for the chunk.
	Ncpus int64
	// Resources are what the chunk takes from its vnode, in exec_vnode's
	// order, with canonical values (ncpus always named).
	Resources []Pair
}

// Mother is the mother superior's node: the first chunk's host, "" for
// an empty allocation.
func (a Alloc) Mother() string {
	if len(a) == 0 {
		return ""
	}
	return a[0].Host
}

// OnHost reports whether a chunk runs on host's mom.
func (a Alloc) OnHost(host string) bool {
	for _, h := range a {
		if h.Host == host {
			return true
		}
	}
	return false
}

// Hosts are the moms' nodes of the chunks, each once, in chunk order.
func (a Alloc) Hosts() []string {
	var out []string
	for _, h := range a {
		if !slices.Contains(out, h.Host) {
			out = append(out, h.Host)
		}
	}
	return out
}

// Vnodes are the chunks' vnodes in order (a vnode once per chunk).
func (a Alloc) Vnodes() []string {
	out := make([]string, len(a))
	for i, h := range a {
		out[i] = h.Vnode
	}
	return out
}

// Amounts are what each chunk takes from its vnode, typed by t: its
// consumable numeric resources (a value that is no number of its type is
// left out).
func (a Alloc) Amounts(t *Table) []Amounts {
	out := make([]Amounts, len(a))
	for i, h := range a {
		am := Amounts{}
		for _, p := range h.Resources {
			if !t.Consumable(p.Name) {
				continue
			}
			if v, ok := t.Number(p.Name, p.Value); ok {
				am[p.Name] += v
			}
		}
		out[i] = am
	}
	return out
}

// ExecVnode renders the allocation as exec_vnode:
// "(n1:ncpus=2:mem=1gb)+(n2:ncpus=1)".
func (a Alloc) ExecVnode() string {
	var b strings.Builder
	for i, h := range a {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteByte('(')
		b.WriteString(h.Vnode)
		for _, p := range h.Resources {
			b.WriteByte(':')
			b.WriteString(p.Name)
			b.WriteByte('=')
			b.WriteString(p.Value)
		}
		b.WriteByte(')')
	}
	return b.String()
}

// ExecHost renders the allocation as exec_host: each chunk's host with
// its index among that host's chunks, and its cpus when not one
// ("n1/0*2+n1/1+n2/0").
func (a Alloc) ExecHost() string {
	if len(a) == 0 {
		return ""
	}
	var b strings.Builder
	index := map[string]int{}
	for i, h := range a {
		if i > 0 {
			b.WriteByte('+')
		}
		k := index[h.Host]
		index[h.Host] = k + 1
		b.WriteString(h.Host)
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(k))
		if h.Ncpus != 1 {
			b.WriteByte('*')
			b.WriteString(strconv.FormatInt(h.Ncpus, 10))
		}
	}
	return b.String()
}

// Equal reports whether two allocations hold the same chunks.
func (a Alloc) Equal(b Alloc) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Vnode != y.Vnode || x.Host != y.Host || x.Ncpus != y.Ncpus || len(x.Resources) != len(y.Resources) {
			return false
		}
		for k := range x.Resources {
			if x.Resources[k] != y.Resources[k] {
				return false
			}
		}
	}
	return true
}

// ExecPart is one part of exec_vnode as written: "(node:spec)", or a bare
// "node" as qrun -H names one.
type ExecPart struct {
	Node string
	Spec string // "ncpus=2:mem=1gb"; "" when the part names only its node
}

// SplitExecVnode is the one reading of exec_vnode's syntax (and of a run
// request's node list and a reservation's resv_nodes): its parts in
// order, blank ones left out. Callers read the specs as they need them.
func SplitExecVnode(s string) []ExecPart {
	var out []ExecPart
	for rest := s; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "+")
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		part = strings.TrimSuffix(strings.TrimPrefix(part, "("), ")")
		node, spec, _ := strings.Cut(part, ":")
		out = append(out, ExecPart{Node: node, Spec: spec})
	}
	return out
}

// SpecPairs reads a part's spec ("ncpus=2:mem=1gb") as its pairs in
// order; a field that is not name=value is left out.
func SpecPairs(spec string) []Pair {
	var out []Pair
	for fields := spec; fields != ""; {
		var f string
		f, fields, _ = strings.Cut(fields, ":")
		if name, val, ok := strings.Cut(f, "="); ok && name != "" {
			out = append(out, Pair{Name: name, Value: val})
		}
	}
	return out
}

// ParseAlloc reads an allocation from its text, exec_host and exec_vnode
// as this server renders them, where the typed form is not at hand (a
// job stored before it, a finished subjob's record). exec_vnode gives the
// chunks and exec_host each one's host and cpus; a job with exec_host
// alone has one chunk per exec_host part, on that host. What does not
// read is left out rather than refused: the text is the server's own.
func ParseAlloc(execHost, execVnode string) Alloc {
	var hosts []Held
	for _, part := range strings.Split(execHost, "+") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		host, rest, _ := strings.Cut(part, "/")
		h := Held{Vnode: host, Host: host, Ncpus: 1}
		if _, n, ok := strings.Cut(rest, "*"); ok {
			if v, err := strconv.ParseInt(n, 10, 64); err == nil {
				h.Ncpus = v
			}
		}
		h.Resources = []Pair{{Name: "ncpus", Value: strconv.FormatInt(h.Ncpus, 10)}}
		hosts = append(hosts, h)
	}
	parts := SplitExecVnode(execVnode)
	if len(parts) == 0 {
		var out Alloc
		for _, h := range hosts {
			if h.Host != "" && !strings.Contains(h.Host, ":") { // no node's name
				out = append(out, h)
			}
		}
		return out
	}
	var out Alloc
	for i, p := range parts {
		if p.Node == "" {
			continue
		}
		h := Held{Vnode: p.Node, Host: p.Node, Ncpus: 1, Resources: SpecPairs(p.Spec)}
		if i < len(hosts) && hosts[i].Host != "" {
			h.Host, h.Ncpus = hosts[i].Host, hosts[i].Ncpus
		} else if v, ok := pairValue(h.Resources, "ncpus"); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				h.Ncpus = n
			}
		}
		out = append(out, h)
	}
	return out
}

func pairValue(ps []Pair, name string) (string, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}
