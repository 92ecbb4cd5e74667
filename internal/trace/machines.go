package trace

import (
	"bytes"
	"fmt"
	"io"
)

// ReadMachines reads an Alea .machines file: one cluster per line, fields
// separated by tabs or blanks: id, name, nodes, CPUs per node, speed
// rating and optionally memory per node in KB. Blank lines and lines
// beginning with ';' or '#' are skipped.
func ReadMachines(r io.Reader) ([]Machine, error) {
	ls, err := newLines(r)
	if err != nil {
		return nil, err
	}
	var ms []Machine
	var f [6][]byte
	for {
		line, ok := ls.next()
		if !ok {
			break
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == ';' || t[0] == '#' {
			continue
		}
		n := split(t, f[:])
		if n != 5 && n != 6 {
			return nil, fmt.Errorf("line %d: %s fields, want 5 or 6 (id, name, nodes, CPUs per node, speed[, memory KB])", ls.n, fieldCount(n, len(f)))
		}
		var v [6]int64
		for i, name := range [6]string{"id", "", "nodes", "CPUs per node", "speed", "memory"} {
			if i == 1 || i >= n {
				continue
			}
			x, ok := parseInt(f[i])
			if !ok || x < 0 || i < 5 && !fitsInt(x) {
				return nil, fmt.Errorf("line %d: %s %q is not a count", ls.n, name, f[i])
			}
			v[i] = x
		}
		if v[2] == 0 || v[3] == 0 {
			return nil, fmt.Errorf("line %d: a cluster needs at least one node of at least one CPU", ls.n)
		}
		ms = append(ms, Machine{
			ID: int(v[0]), Name: string(f[1]), Nodes: int(v[2]), CPUsPerNode: int(v[3]),
			Speed: int(v[4]), MemKB: v[5],
		})
	}
	return ms, ls.err()
}
