package server

import (
	"reflect"
	"testing"

	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/resc"
)

// The typed allocation a mom reads says what the exec_vnode the server
// renders from the same placement says, chunk by chunk.
func TestMomAllocMatchesExecVnode(t *testing.T) {
	t.Parallel()
	rt := resc.NewTable(nil)
	for _, spec := range []string{"1:ncpus=2:mem=1gb+2:ngpus=1:mem=512mb", "3:mem=2gb", "1:ncpus=4:vmem=8gb:mpiprocs=4"} {
		sel, err := rt.ParseSelect(spec)
		if err != nil {
			t.Fatal(err)
		}
		var p []place.Placement
		nodes := []string{"n1", "n2", "n2[0]", "n3"}
		for _, c := range sel {
			for range c.Count {
				p = append(p, place.Placement{Node: nodes[len(p)%len(nodes)], Chunk: c.One()})
			}
		}
		typed, _ := place.AllocOf(p, nil)
		vnode := typed.ExecVnode()
		parsed := place.ParseAssigned(rt, vnode)
		if direct := place.AssignedOf(rt, typed); !reflect.DeepEqual(direct, parsed) {
			t.Errorf("%s: the allocation's amounts %+v, its exec_vnode %q reads %+v", spec, direct, vnode, parsed)
		}
		alloc := momAlloc(p)
		if len(alloc) != len(parsed) {
			t.Fatalf("%s: %d chunks typed, %d in %q", spec, len(alloc), len(parsed), vnode)
		}
		for i := range alloc {
			if alloc[i].Node != parsed[i].Node || !reflect.DeepEqual(alloc[i].Amounts, map[string]float64(parsed[i].Amounts)) {
				t.Errorf("%s chunk %d: typed %+v, exec_vnode %q reads %+v", spec, i, alloc[i], vnode, parsed[i])
			}
		}
	}
}
