package mom

import (
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// A job's share of this node is the sum of its chunks here.
func TestJobShare(t *testing.T) {
	t.Parallel()
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

// The typed allocation a server sends is what the share is read from:
// exec_vnode is read only when a server before it sent none.
func TestJobShareFromAlloc(t *testing.T) {
	t.Parallel()
	own := map[string]bool{"n1": true, "n1[1]": true}
	job := &proto.MomJob{
		ExecVnode: "(n1:ncpus=64:mem=64gb)", // not read: Alloc is given
		Alloc: []proto.MomChunk{
			{Node: "n1", Amounts: map[string]float64{"ncpus": 2, "mem": 1 << 30, "ngpus": 1}},
			{Node: "n2", Amounts: map[string]float64{"ncpus": 8, "ngpus": 4}},
			{Node: "n1[1]", Amounts: map[string]float64{"ncpus": 1, "vmem": 2 << 30, "ngpus": 2}},
		},
	}
	if mem, vmem, cpus := jobShare(job, own); mem != 1<<30 || vmem != 2<<30 || cpus != 3 {
		t.Errorf("share from Alloc: mem %v vmem %v ncpus %v", mem, vmem, cpus)
	}
	if n := jobGPUs(job, own); n != 3 {
		t.Errorf("GPUs from Alloc: %d, want 3", n)
	}
	old := &proto.MomJob{ExecVnode: "(n1:ncpus=2:ngpus=1)+(n2:ngpus=4)"}
	if n := jobGPUs(old, own); n != 1 {
		t.Errorf("GPUs from exec_vnode: %d, want 1", n)
	}
}
