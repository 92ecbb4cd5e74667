package starts

import (
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Free describes the nodes that can take work now: the named ones,
// or all when none are named; hosts asks whether their hosts
// are free of jobs too (place=exclhost).
func (v View) Free(names []string, hosts bool) []*place.Node {
	var out []*place.Node
	if names == nil {
		names = v.Nodes.Names()
	}
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if seen[name] || !v.Nodes.Up(name) {
			continue
		}
		seen[name] = true
		amounts, used := v.Nodes.Amounts(name), v.Jobs.Assigned(name)
		nf := &place.Node{Name: name, Avail: v.Nodes.Available(name), Free: make(map[string]float64, len(amounts))}
		for r, x := range amounts {
			nf.Free[r] = x - used[r]
		}
		out = append(out, nf)
	}
	v.markIdle(out, hosts)
	place.SortByName(out)
	return out
}

// markIdle sets what an exclusive placement needs to know of the
// candidates: whether no job runs on each (Idle) and, when the job asks
// for whole hosts, on any node of its host (HostIdle); a node held
// exclusively shows nothing free.
func (v View) markIdle(cands []*place.Node, hosts bool) {
	busyHost := map[string]bool{}
	if hosts {
		for name := range v.Nodes.All() {
			if v.Jobs.JobsOn(name) > 0 || v.Jobs.Exclusively(name) {
				busyHost[v.Nodes.Host(name)] = true
			}
		}
	}
	for _, nf := range cands {
		nf.Idle = v.Jobs.JobsOn(nf.Name) == 0 && !v.Jobs.Exclusively(nf.Name)
		nf.HostIdle = hosts && !busyHost[v.Nodes.Host(nf.Name)]
		if v.Jobs.Exclusively(nf.Name) {
			for r := range nf.Free {
				nf.Free[r] = 0
			}
		}
	}
}

// counting is sel as a scheduler that counts only the resources named
// read it (RunSpec.Counted), for checking its placement; sel itself when
// it counts all.
func counting(rt *resc.Table, sel resc.Select, counted []string) resc.Select {
	if len(counted) == 0 {
		return sel
	}
	cs, err := rt.Counting(counted).ParseSelect(sel.String())
	if err != nil {
		return sel
	}
	return cs
}

// assignWhole gives each chunk of a placement checked with counting
// chunks the job's whole chunk: the job is assigned everything it asked
// for, counted or not, as OpenPBS's server assigns it.
func assignWhole(p []place.Placement, sel resc.Select) {
	whole := make(map[string]resc.Chunk, len(sel))
	for _, c := range sel {
		whole[place.ChunkText(c)] = c.One()
	}
	for i := range p {
		if c, ok := whole[place.ChunkText(p[i].Chunk)]; ok {
			if i > 0 {
				c = c.Rest() // first-node-only amounts on the first node
			}
			p[i].Chunk = c
		}
	}
}

// placementHosts reads the nodes of a run request: "n1+n2" (qrun -H: a
// node per chunk, or one for all), or a scheduler's exact placement
// "(n1:ncpus=2:mem=1gb)+(n2:ncpus=1)", one chunk per part, whose amounts
// must be those of the job's chunks in order: the server verifies a
// placement, it does not make another one.
func placementHosts(spec string, sel resc.Select) ([]string, error) {
	var chunks []resc.Chunk
	for _, c := range sel {
		for i := 0; i < c.Count; i++ {
			chunks = append(chunks, c)
		}
	}
	var hosts []string
	for k, part := range resc.SplitExecVnode(spec) {
		host, amounts := part.Node, part.Spec
		hosts = append(hosts, host)
		if amounts == "" {
			continue
		}
		if k >= len(chunks) {
			return nil, proto.Errorf(proto.PBSE_BADATVAL, "(placement has more chunks than the job's select %s)", sel)
		}
		if amounts == place.ChunkText(chunks[k]) {
			continue // the chunk as the job asked for it, written the same way
		}
		given, err := sel.Table().ParseSelect("1:" + amounts)
		if err != nil {
			return nil, proto.Errorf(proto.PBSE_BADATVAL, "(placement chunk %d: %v)", k+1, err)
		}
		if !sameAmounts(given[0], chunks[k]) {
			return nil, proto.Errorf(proto.PBSE_BADATVAL, "(placement chunk %d (%s:%s) does not match the job's chunk %s)", k+1, host, amounts, place.ChunkText(chunks[k]))
		}
	}
	return hosts, nil
}

// placementParts counts the chunks of a run request's node list.
func placementParts(spec string) int { return len(resc.SplitExecVnode(spec)) }

// sameAmounts compares two chunks' consumable amounts (a chunk naming no
// ncpus takes one).
func sameAmounts(a, b resc.Chunk) bool {
	x, y := a.Amounts, b.Amounts
	if len(x) != len(y) {
		return false
	}
	for r, v := range x {
		if y[r] != v {
			return false
		}
	}
	return true
}
