package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fakeFS is a cgroup tree in a temporary directory: a directory made
// gets the control files the kernel would give it (by the hierarchy it
// is in), and rmdir removes them with it unless a process is listed.
type fakeFS struct {
	v2    bool
	files map[string][]string // v1: hierarchy dir -> control files; v2: mount dir -> files
}

func (f *fakeFS) Mkdir(path string) error {
	if err := os.Mkdir(path, 0o755); err != nil {
		return err
	}
	for top, names := range f.files {
		if !strings.HasPrefix(path, top+"/") {
			continue
		}
		for _, n := range names {
			v := ""
			switch n {
			case "cpuset.cpus.effective":
				v = "0-3\n"
			case "cpu.stat":
				v = "usage_usec 0\n"
			}
			if err := os.WriteFile(filepath.Join(path, n), []byte(v), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *fakeFS) Rmdir(path string) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	if b, _ := os.ReadFile(filepath.Join(path, "cgroup.procs")); strings.TrimSpace(string(b)) != "" {
		return syscall.EBUSY
	}
	ents, _ := os.ReadDir(path)
	for _, e := range ents {
		if e.IsDir() {
			return syscall.EBUSY
		}
	}
	return os.RemoveAll(path)
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// fakeV1 is a v1 host: memory, cpuset, cpu and cpuacct (apart, as on
// this machine; cpuacct is not used) and pids mounted under dir; the
// process's memory cgroup is /sandbox.
func fakeV1(t *testing.T) (System, string) {
	dir := t.TempDir()
	files := map[string][]string{
		Memory:  {"cgroup.procs", "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.max_usage_in_bytes", "memory.memsw.max_usage_in_bytes", "memory.oom_control"},
		Cpuset:  {"cgroup.procs", "cpuset.cpus", "cpuset.mems", "cpuset.sched_load_balance"},
		CPU:     {"cgroup.procs", "cpu.cfs_quota_us", "cpu.cfs_period_us"},
		cpuacct: {"cgroup.procs", "cpuacct.usage"},
		Pids:    {"cgroup.procs", "pids.max"},
	}
	fs := &fakeFS{files: map[string][]string{}}
	var mi strings.Builder
	for i, c := range []string{Memory, Cpuset, CPU, cpuacct, Pids} {
		top := filepath.Join(dir, c)
		fs.files[top] = files[c]
		for _, n := range files[c] {
			write(t, filepath.Join(top, n), "")
		}
		mi.WriteString(strings.Join([]string{"3" + string(rune('0'+i)), "25", "0:1", "/", top, "rw", "-", "cgroup", "cgroup", "rw," + c}, " ") + "\n")
	}
	write(t, filepath.Join(dir, Cpuset, "cpuset.cpus"), "0-3\n")
	write(t, filepath.Join(dir, Cpuset, "cpuset.mems"), "0\n")
	if err := os.Mkdir(filepath.Join(dir, Memory, "sandbox"), 0o755); err != nil {
		t.Fatal(err)
	}
	self := "5:memory:/sandbox\n4:cpuset:/\n3:cpu:/\n2:cpuacct:/\n1:pids:/\n0::/\n"
	return System{MountInfo: mi.String(), SelfCgroup: self, fs: fs}, dir
}

// fakeV2 is a v2 host with every controller at dir (and a v1 hierarchy
// of pids too, which auto must not prefer).
func fakeV2(t *testing.T) (System, string) {
	dir := t.TempDir()
	top := filepath.Join(dir, "unified")
	fs := &fakeFS{v2: true, files: map[string][]string{top: {
		"cgroup.procs", "cgroup.controllers", "cgroup.subtree_control", "cgroup.kill", "cgroup.events", "cgroup.freeze", "cpu.stat",
		"memory.max", "memory.swap.max", "memory.oom.group", "memory.peak", "memory.swap.peak", "memory.events",
		"cpuset.cpus", "cpuset.cpus.effective", "cpu.max", "pids.max"}}}
	write(t, filepath.Join(top, "cgroup.controllers"), "cpuset cpu io memory hugetlb pids\n")
	write(t, filepath.Join(top, "cgroup.subtree_control"), "memory\n")
	write(t, filepath.Join(dir, "pids", "cgroup.procs"), "")
	mi := "30 25 0:28 / " + filepath.Join(dir, "pids") + " rw - cgroup cgroup rw,pids\n31 25 0:29 / " + top + " rw - cgroup2 cgroup2 rw,nsdelegate\n"
	return System{MountInfo: mi, SelfCgroup: "1:pids:/\n0::/\n", fs: fs}, dir
}

// The v1 tree: a directory per hierarchy of the controllers, under the
// process's own cgroup for "./"; a job's limits in the files v1 names,
// and only the directories it needs.
func TestTreeV1Fake(t *testing.T) {
	sys, dir := fakeV1(t)
	cfg := DefaultConfig()
	cfg.Root = "./pbs"
	cfg.Controllers = []string{Memory, Cpuset, CPU, Pids}
	tree, err := Open(cfg, sys)
	if err != nil {
		t.Fatal(err)
	}
	if tree.V2() {
		t.Fatal("v2 chosen on a v1 host")
	}
	var paths []string
	for _, r := range tree.Roots() {
		paths = append(paths, strings.TrimPrefix(r.Path, dir))
	}
	if got := strings.Join(paths, " "); got != "/memory/sandbox/pbs /cpuset/pbs /cpu/pbs /pids/pbs" {
		t.Fatalf("roots %s", got)
	}
	if home := tree.Roots()[0].Home; home != filepath.Join(dir, "memory/sandbox") {
		t.Errorf("the opener's own memory cgroup %q", home)
	}
	if got := read(t, filepath.Join(dir, "cpuset/pbs/cpuset.cpus")); got != "0-3" || tree.CPUs().String() != "0-3" {
		t.Fatalf("root cpuset %q, tree cpus %v", got, tree.CPUs())
	}
	j, err := tree.Create("12[3].srv", Limits{Mem: 1 << 30, Vmem: 2 << 30, Cpus: CPUSet{1, 2}, PidsMax: 100})
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"memory/sandbox/pbs/12[3].srv/memory.limit_in_bytes":       "1073741824",
		"memory/sandbox/pbs/12[3].srv/memory.memsw.limit_in_bytes": "2147483648",
		"cpuset/pbs/12[3].srv/cpuset.cpus":                         "1-2",
		"cpuset/pbs/12[3].srv/cpuset.mems":                         "0",
		"cpuset/pbs/12[3].srv/cpuset.sched_load_balance":           "0",
		"pids/pbs/12[3].srv/pids.max":                              "100",
	} {
		if got := read(t, filepath.Join(dir, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	// Shared cpus: a quota, and the node's cpus.
	if _, err := tree.Create("13.srv", Limits{CPUQuota: 1.5}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "cpu/pbs/13.srv/cpu.cfs_quota_us")); got != "150000" {
		t.Errorf("quota %q", got)
	}
	if exists(filepath.Join(dir, "cpuset/pbs/13.srv")) || exists(filepath.Join(dir, "pids/pbs/13.srv")) {
		t.Errorf("a job without cpus of its own or a pids limit has a cpuset or pids cgroup")
	}
	if ids, err := tree.List(); err != nil || strings.Join(ids, " ") != "12[3].srv 13.srv" {
		t.Fatalf("list %v %v", ids, err)
	}

	write(t, filepath.Join(dir, "memory/sandbox/pbs/12[3].srv/memory.max_usage_in_bytes"), "1048576\n")
	write(t, filepath.Join(dir, "memory/sandbox/pbs/12[3].srv/memory.memsw.max_usage_in_bytes"), "2097152\n")
	write(t, filepath.Join(dir, "memory/sandbox/pbs/12[3].srv/memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
	if u := j.Usage(); u != (Usage{MemPeak: 1 << 20, VmemPeak: 2 << 20, OOMKills: 2}) {
		t.Fatalf("usage %+v", u)
	}
	if err := j.Kill(0, nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Remove(); err != nil {
		t.Fatal(err)
	}
	if j.Exists() {
		t.Fatal("removed job's cgroup still there")
	}
	// A leftover of an earlier run is replaced.
	if _, err := tree.Create("13.srv", Limits{}); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(dir, "cpu/pbs/13.srv")) {
		t.Errorf("quota of the earlier run kept")
	}
	// Without memory, a job with nothing to limit still has a cgroup to
	// be killed by.
	cfg.Controllers = []string{Cpuset, CPU}
	cfg.Root = "pbs2"
	tree2, err := Open(cfg, sys)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := tree2.Create("14.srv", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(bare.Dirs) != 1 || !exists(bare.Dirs[0].Path) {
		t.Errorf("job without limits: %+v", bare.Dirs)
	}
	if _, err := tree.Create("../x", Limits{}); err == nil {
		t.Fatal("job id with a slash made a cgroup")
	}
}

// The v2 tree: the controllers passed down every level; a job's limits
// in the files v2 names, the whole job killed by the OOM killer.
func TestTreeV2Fake(t *testing.T) {
	sys, dir := fakeV2(t)
	cfg := DefaultConfig()
	cfg.Root = "site/pbs"
	cfg.Controllers = []string{Memory, Cpuset, CPU, Pids}
	tree, err := Open(cfg, sys)
	if err != nil {
		t.Fatal(err)
	}
	if !tree.V2() || len(tree.Roots()) != 1 {
		t.Fatalf("v2 %v, roots %v", tree.V2(), tree.Roots())
	}
	for _, level := range []string{"unified", "unified/site", "unified/site/pbs"} {
		got := read(t, filepath.Join(dir, level, "cgroup.subtree_control"))
		for _, c := range []string{"cpuset", "cpu", "pids"} {
			if !strings.Contains(got, "+"+c) {
				t.Errorf("%s: subtree_control %q lacks %s", level, got, c)
			}
		}
	}
	if tree.CPUs().String() != "0-3" {
		t.Fatalf("cpus %v", tree.CPUs())
	}
	j, err := tree.Create("7.srv", Limits{Mem: 1 << 30, Vmem: 3 << 30, Cpus: CPUSet{2}, CPUQuota: 0.5, PidsMax: 64})
	if err != nil {
		t.Fatal(err)
	}
	jd := filepath.Join(dir, "unified/site/pbs/7.srv")
	for file, want := range map[string]string{
		"memory.max": "1073741824", "memory.swap.max": "2147483648", "memory.oom.group": "1",
		"cpuset.cpus": "2", "cpu.max": "50000 100000", "pids.max": "64",
	} {
		if got := read(t, filepath.Join(jd, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	write(t, filepath.Join(jd, "cpu.stat"), "usage_usec 1500000\nuser_usec 1000000\n")
	write(t, filepath.Join(jd, "memory.peak"), "4096\n")
	write(t, filepath.Join(jd, "memory.swap.peak"), "1024\n")
	write(t, filepath.Join(jd, "memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
	if u := j.Usage(); u != (Usage{CPUNanos: 1.5e9, MemPeak: 4096, VmemPeak: 5120, OOMKills: 1}) {
		t.Fatalf("usage %+v", u)
	}
	if err := j.Remove(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenChoosesHierarchy(t *testing.T) {
	// This machine's shape: v1 controllers, an empty hybrid v2 mount.
	sys, dir := fakeV1(t)
	uni := filepath.Join(dir, "unified")
	write(t, filepath.Join(uni, "cgroup.controllers"), "hugetlb\n")
	sys.MountInfo += "40 25 0:40 / " + uni + " rw - cgroup2 cgroup2 rw\n"
	cfg := DefaultConfig()
	cfg.Root = "pbs_" + t.Name()
	if tree, err := Open(cfg, sys); err != nil || tree.V2() {
		t.Fatalf("auto on a hybrid host: v2 %v, %v", tree != nil && tree.V2(), err)
	}
	cfg.Hierarchy = HierarchyV2
	if _, err := Open(cfg, sys); err == nil || !strings.Contains(err.Error(), "controllers memory,cpuset,cpu not offered") {
		t.Fatalf("v2 without its controllers: %v", err)
	}
	// Nothing asked for but a cgroup: the v2 hierarchy does.
	cfg.Controllers = nil
	if tree, err := Open(cfg, sys); err != nil || !tree.V2() {
		t.Fatalf("v2 with no controllers: %v", err)
	}
	cfg.Hierarchy = HierarchyAuto
	cfg.Controllers = []string{Memory}
	if _, err := Open(cfg, System{fs: sys.fs}); err == nil || !strings.Contains(err.Error(), "in neither hierarchy") {
		t.Fatalf("no cgroup mounts: %v", err)
	}
}
