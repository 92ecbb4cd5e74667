package mom

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/proto"
)

// nvidia-smi -L: a GPU line each (index, name, UUID); MIG lines and
// anything else skipped; a GPU line without an index is an error.
func TestParseNvidiaSmiList(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in string
		want     []smiGPU
		err      string
	}{
		{"none", "", nil, ""},
		{"two", "GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-a1b2)\nGPU 1: Tesla V100-SXM2-16GB (UUID: GPU-c3d4)\n",
			[]smiGPU{{0, "Tesla V100-SXM2-16GB", "GPU-a1b2"}, {1, "Tesla V100-SXM2-16GB", "GPU-c3d4"}}, ""},
		{"mig lines skipped, order by index", "GPU 1: NVIDIA A100 (UUID: GPU-2)\n  MIG 1g.5gb Device 0: (UUID: MIG-9)\r\nGPU 0: NVIDIA A100 (UUID: GPU-1)\r\n",
			[]smiGPU{{0, "NVIDIA A100", "GPU-1"}, {1, "NVIDIA A100", "GPU-2"}}, ""},
		{"no uuid", "GPU 0: Quadro\n", []smiGPU{{0, "Quadro", ""}}, ""},
		{"driver message", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", nil, ""},
		{"bad index", "GPU x: Tesla\n", nil, "no GPU index"},
		{"signed index", "GPU +1: Tesla\n", nil, "no GPU index"},
		{"no colon", "GPU 0 Tesla\n", nil, "no GPU index"},
		{"twice", "GPU 0: a\nGPU 0: b\n", nil, "listed twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseNvidiaSmiList(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func FuzzParseNvidiaSmiList(f *testing.F) {
	f.Add("GPU 0: Tesla T4 (UUID: GPU-1)\n  MIG 1g.5gb Device 0: (UUID: MIG-2)\nGPU 1: x\n")
	f.Add("GPU 99999999999999999999: x")
	f.Fuzz(func(t *testing.T, s string) {
		list, err := parseNvidiaSmiList(s)
		if err != nil {
			return
		}
		for i, g := range list {
			if g.Index < 0 || g.Index >= maxGPUs || i > 0 && list[i-1].Index >= g.Index {
				t.Fatalf("indices %+v", list)
			}
		}
	})
}

// $gpus: none, a count, or device paths; anything else stops the mom.
func TestParseGPUSetting(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want GPUSetting
		err  string
	}{
		{"none", GPUSetting{Set: true}, ""},
		{"2", GPUSetting{Set: true, Count: 2}, ""},
		{"/dev/nvidia0, /dev/nvidia2", GPUSetting{Set: true, Count: 2, Paths: []string{"/dev/nvidia0", "/dev/nvidia2"}}, ""},
		{"-1", GPUSetting{}, "want 0 to"},
		{"100000", GPUSetting{}, "want 0 to"},
		{"nvidia0", GPUSetting{}, "absolute device paths"},
		{"/dev/a,/dev/a", GPUSetting{}, "named twice"},
	} {
		got, err := parseGPUSetting(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	if _, err := ParseMomConfig(strings.NewReader("$gpus nvidia0\n")); err == nil || !strings.Contains(err.Error(), "line 1: $gpus") {
		t.Errorf("mom_priv/config with a bad $gpus: %v", err)
	}
}

// A mom with $gpus reports ngpus, gives each job the lowest free GPUs for
// its ngpus here, refuses a job when too few are free, and frees them at
// the job's end.
func TestGPUAssignment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var paths []string
	for _, n := range []string{"g0", "g1", "g2"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	conf, err := ParseMomConfig(strings.NewReader("$gpus " + strings.Join(paths, ",") + "\nngpus 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := withMomConfig(conf, &Mom{log: hclog.NewNullLogger(), cfg: Config{NodeName: "n1"}})
	if err := m.loadGPUs(); err != nil {
		t.Fatal(err)
	}
	if m.live.Load().resources[proto.ResNgpus] != "3" || conf.Resources[proto.ResNgpus] != "8" {
		t.Fatalf("reported ngpus %q (config's %q)", m.live.Load().resources[proto.ResNgpus], conf.Resources[proto.ResNgpus])
	}
	job := func(id, vnode string) *proto.MomJob { return &proto.MomJob{JobID: id, ExecVnode: vnode} }
	take := func(j *proto.MomJob) []int {
		t.Helper()
		got, err := m.takeGPUs(j)
		if err != nil {
			t.Fatalf("%s: %v", j.JobID, err)
		}
		return got
	}
	if got := take(job("1", "(n1:ncpus=1:ngpus=1)")); !reflect.DeepEqual(got, []int{0}) {
		t.Fatalf("first job's GPUs %v", got)
	}
	if got := take(job("2", "(n1:ngpus=1)+(n2:ngpus=4)+(n1:ngpus=1)")); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Fatalf("second job's GPUs %v", got)
	}
	if got := take(job("3", "(n1:ncpus=1)")); got != nil {
		t.Fatalf("a job without ngpus got %v", got)
	}
	if _, err := m.takeGPUs(job("4", "(n1:ngpus=1)")); err == nil || !strings.Contains(err.Error(), "0 of its 3 GPUs free, the job asks for 1") {
		t.Fatalf("a job over the free GPUs: %v", err)
	}
	m.setResult(&momJob{spec: proto.MomJob{JobID: "1"}}, nil)
	if got := take(job("4", "(n1:ngpus=1)")); !reflect.DeepEqual(got, []int{0}) {
		t.Fatalf("after the first job's end: %v", got)
	}
	// A static ngpus line without $gpus is a count: indices 0 to N-1.
	conf, _ = ParseMomConfig(strings.NewReader("ngpus 2\n"))
	m = withMomConfig(conf, &Mom{log: hclog.NewNullLogger(), cfg: Config{NodeName: "n1"}})
	if err := m.loadGPUs(); err != nil || m.live.Load().resources[proto.ResNgpus] != "2" {
		t.Fatalf("static ngpus 2: %v, reported %q", err, m.live.Load().resources[proto.ResNgpus])
	}
	if got := take(job("5", "(n1:ngpus=2)")); !reflect.DeepEqual(got, []int{0, 1}) {
		t.Fatalf("static ngpus 2: a job of 2 gets %v", got)
	}
	if got := execGPUs("n1", []int{1, 2}); got != "n1-gpu/1+n1-gpu/2" {
		t.Errorf("exec_gpus %q", got)
	}
}

// The devices cgroup denies the node's GPUs that are not the job's, by
// device number.
func TestDeniedGPUs(t *testing.T) {
	t.Parallel()
	m := &Mom{gpus: []gpuDev{{Index: 0, Dev: "c 195:0"}, {Index: 1, Dev: "c 195:1"}, {Index: 2}}}
	if got := m.deniedGPUs([]int{1}); !reflect.DeepEqual(got, []string{"c 195:0"}) {
		t.Errorf("denied %v", got)
	}
	if got := m.deniedGPUs(nil); !reflect.DeepEqual(got, []string{"c 195:0", "c 195:1"}) {
		t.Errorf("denied to a job without GPUs %v", got)
	}
	// Files stand for GPUs without device numbers: the devices
	// controller cannot hide them, and the mom says so at start.
	p := filepath.Join(t.TempDir(), "g0")
	os.WriteFile(p, nil, 0o600)
	conf, _ := ParseMomConfig(strings.NewReader("$gpus " + p + "\n"))
	m = withMomConfig(conf, &Mom{log: hclog.NewNullLogger(), conf: &confinement{cfg: cgroup.Config{Controllers: []string{cgroup.Devices}}}})
	if err := m.loadGPUs(); err == nil || !strings.Contains(err.Error(), "no character device") {
		t.Errorf("devices controller with a file for a GPU: %v", err)
	}
}

// withMomConfig gives m the mom_priv/config c.
func withMomConfig(c *MomConfig, m *Mom) *Mom {
	m.live.Store(&liveConfig{conf: c, resources: c.Resources})
	return m
}
