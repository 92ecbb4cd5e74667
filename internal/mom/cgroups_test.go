package mom

import (
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// A job's share of this node is the sum of its chunks here.
func TestJobShare(t *testing.T) {
	for _, tt := range []struct {
		vnode           string
		ncpus           int
		mem, vmem, cpus float64
	}{
		{"(n1:ncpus=2:mem=1gb)+(n2:ncpus=4:mem=8gb)+(n1:ncpus=1:mem=512mb:vmem=2gb)", 2, 1.5 * (1 << 30), 2 << 30, 3},
		{"(n2:ncpus=4)", 3, 0, 0, 0},
		{"", 3, 0, 0, 3},
	} {
		mem, vmem, cpus := jobShare(&proto.MomJob{ExecVnode: tt.vnode, Ncpus: tt.ncpus}, map[string]bool{"n1": true})
		if mem != tt.mem || vmem != tt.vmem || cpus != tt.cpus {
			t.Errorf("%q: mem %v vmem %v ncpus %v, want %v %v %v", tt.vnode, mem, vmem, cpus, tt.mem, tt.vmem, tt.cpus)
		}
	}
}
