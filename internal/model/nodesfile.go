package model

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/proto"
)

// NodesFile is server_priv/nodes, the classic way to declare nodes
// (reference §4.6): one node per line,
//
//	name[:ts] [np=N] [attribute=value ...] [property ...]
//
// ":ts" makes a time-shared node (ntype time-shared), np=N gives it N
// cpus (resources_available.ncpus), attribute=value sets any node
// attribute a manager may set with qmgr (resources as
// resources_available.R=value), and bare words are properties. '#'
// starts a comment. The server reads it at start and creates the nodes
// its store does not hold yet; qmgr is the way to change them afterwards.
const NodesFile = "nodes"

// NodeLine is one node of a nodes file: its name and its attributes as
// qmgr would set them.
type NodeLine struct {
	Name  string
	Line  int
	Attrs []proto.Attr
}

// ParseNodesFile reads a nodes file; name is used in messages. It reports
// every bad line ("name:line: message") and returns no nodes on error, so
// that a server never starts with half of what an admin wrote.
func ParseNodesFile(r io.Reader, name string) ([]NodeLine, error) {
	var out []NodeLine
	var errs []string
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	n := 0
	for sc.Scan() {
		n++
		line, _, _ := strings.Cut(sc.Text(), "#")
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Sprintf("%s:%d: %s", name, n, fmt.Sprintf(format, args...)))
		}
		nl := NodeLine{Line: n}
		node, suffix, hasSuffix := strings.Cut(words[0], ":")
		switch {
		case CheckNodeName(node) != nil:
			bad("node name %q (a letter, then letters, digits, '-', '_' or '.')", node)
			continue
		case hasSuffix && suffix != "ts":
			bad("%s: unknown suffix %q (only :ts, a time-shared node)", node, ":"+suffix)
			continue
		}
		if prev, dup := seen[node]; dup {
			bad("%s is already defined on line %d", node, prev)
			continue
		}
		seen[node] = n
		nl.Name = node
		if hasSuffix {
			nl.Attrs = append(nl.Attrs, proto.Attr{Name: proto.AttrNodeNtype, Value: NodeTimeShared})
		}
		var props []string
		ok := true
		for _, w := range words[1:] {
			if strings.IndexFunc(w, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
				bad("%s: %q holds a control character", node, w)
				ok = false
				continue
			}
			key, value, isAttr := strings.Cut(w, "=")
			if !isAttr {
				props = append(props, w)
				continue
			}
			a, err := nodeFileAttr(key, value)
			if err != nil {
				bad("%s: %v", node, err)
				ok = false
				continue
			}
			nl.Attrs = append(nl.Attrs, a)
		}
		if !ok {
			continue
		}
		if len(props) > 0 {
			nl.Attrs = append(nl.Attrs, proto.Attr{Name: proto.AttrNodeProperties, Value: strings.Join(props, ",")})
		}
		out = append(out, nl)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Sprintf("%s:%d: %v", name, n+1, err))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// nodeFileAttr checks one attribute=value word as qmgr would.
func nodeFileAttr(key, value string) (proto.Attr, error) {
	if key == "np" {
		if v, err := strconv.Atoi(value); err != nil || v < 1 {
			return proto.Attr{}, fmt.Errorf("np=%s (want a positive count of cpus)", value)
		}
		return proto.Attr{Name: proto.AttrResourcesAvail, Resource: proto.ResNcpus, Value: value}, nil
	}
	attr, res, _ := strings.Cut(key, ".")
	a := proto.Attr{Name: attr, Resource: res, Value: value}
	d, ok := NodeDefs.Lookup(attr)
	if !ok {
		return a, fmt.Errorf("unknown node attribute %q", attr)
	}
	if d.Access&MgrSet == 0 {
		return a, fmt.Errorf("attribute %s cannot be set", attr)
	}
	v, err := d.Canonical(res, value)
	if err != nil {
		return a, fmt.Errorf("%s: %w", key, err)
	}
	a.Value = v
	return a, nil
}
