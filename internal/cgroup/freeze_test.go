package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withFreezer adds a v1 freezer hierarchy to a fake v1 host.
func withFreezer(t *testing.T, sys System, dir string) System {
	top := filepath.Join(dir, Freezer)
	sys.fs.(*fakeFS).files[top] = []string{"cgroup.procs", "tasks", "freezer.state"}
	write(t, filepath.Join(top, "cgroup.procs"), "")
	write(t, filepath.Join(top, "freezer.state"), "THAWED\n")
	sys.MountInfo += "39 25 0:39 / " + top + " rw - cgroup cgroup rw,freezer\n"
	sys.SelfCgroup = "6:freezer:/\n" + sys.SelfCgroup
	return sys
}

// v1: a mounted freezer hierarchy is part of every job's cgroup, though
// no configuration names it; suspend writes FROZEN, resume THAWED, and
// a kill thaws a frozen job so that it dies.
func TestFreezeV1Fake(t *testing.T) {
	sys, dir := fakeV1(t)
	cfg := DefaultConfig()
	cfg.Controllers = []string{Cpuset}
	plain, err := Open(cfg, sys)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Freezes() {
		t.Fatal("a host without the freezer hierarchy freezes")
	}
	j0, err := plain.Create("1.srv", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if j0.CanFreeze() || !errors.Is(j0.Freeze(time.Second), ErrNoFreezer) {
		t.Fatal("a job without a freezer cgroup froze")
	}

	cfg.Root = "pbs_f"
	tree, err := Open(cfg, withFreezer(t, sys, dir))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range tree.Roots() {
		paths = append(paths, strings.TrimPrefix(r.Path, dir))
	}
	if got := strings.Join(paths, " "); got != "/cpuset/pbs_f /freezer/pbs_f" || !tree.Freezes() {
		t.Fatalf("roots %s, freezes %v", got, tree.Freezes())
	}
	if home := tree.Roots()[1].Home; home != filepath.Join(dir, Freezer) {
		t.Errorf("freezer home %q", home)
	}
	// A job with nothing to limit still has its freezer cgroup.
	j, err := tree.Create("2.srv", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "freezer/pbs_f/2.srv/freezer.state")
	if len(j.Dirs) != 1 || j.Dirs[0].Path != filepath.Dir(state) || !j.CanFreeze() || j.Frozen() {
		t.Fatalf("job dirs %+v, can freeze %v, frozen %v", j.Dirs, j.CanFreeze(), j.Frozen())
	}
	if err := j.Freeze(time.Second); err != nil {
		t.Fatal(err)
	}
	if got := read(t, state); got != "FROZEN" || !j.Frozen() {
		t.Fatalf("after freeze: %q", got)
	}
	if err := j.Thaw(time.Second); err != nil {
		t.Fatal(err)
	}
	if got := read(t, state); got != "THAWED" || j.Frozen() {
		t.Fatalf("after thaw: %q", got)
	}
	write(t, state, "FROZEN\n")
	write(t, filepath.Join(filepath.Dir(state), "cgroup.procs"), "999999999\n")
	j.Kill(0, nil)
	if got := read(t, state); got != "THAWED" {
		t.Fatalf("a frozen job killed stays %q", got)
	}
}

// v2: cgroup.freeze, and the kernel's word in cgroup.events; a job the
// kernel does not say is frozen in time is thawed back.
func TestFreezeV2Fake(t *testing.T) {
	sys, dir := fakeV2(t)
	cfg := DefaultConfig()
	cfg.Controllers = nil
	tree, err := Open(cfg, sys)
	if err != nil {
		t.Fatal(err)
	}
	j, err := tree.Create("3.srv", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	jd := filepath.Join(dir, "unified", DefaultRoot, "3.srv")
	if !tree.Freezes() || !j.CanFreeze() {
		t.Fatal("v2 cannot freeze")
	}
	write(t, filepath.Join(jd, "cgroup.events"), "populated 1\nfrozen 0\n")
	if err := j.Freeze(30 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "not frozen") {
		t.Fatalf("freeze the kernel never confirmed: %v", err)
	}
	if got := read(t, filepath.Join(jd, "cgroup.freeze")); got != "0" {
		t.Fatalf("a job not frozen in time is left with cgroup.freeze %q", got)
	}
	write(t, filepath.Join(jd, "cgroup.events"), "populated 1\nfrozen 1\n")
	if err := j.Freeze(time.Second); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(jd, "cgroup.freeze")); got != "1" || !j.Frozen() {
		t.Fatalf("after freeze: %q", got)
	}
	write(t, filepath.Join(jd, "cgroup.events"), "populated 1\nfrozen 0\n")
	if err := j.Thaw(time.Second); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(jd, "cgroup.freeze")); got != "0" || j.Frozen() {
		t.Fatalf("after thaw: %q", got)
	}
}

// cpuTicks is the cpu time (user and system, in clock ticks) of the
// processes, those gone counting nothing.
func cpuTicks(pids []int) int64 {
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+1:])
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			sum += u + s
		}
	}
	return sum
}

// frozenWindow is how long a frozen job is watched for cpu it should
// not get: a busy loop running would take 50 ticks in it.
const frozenWindow = 500 * time.Millisecond

// checkFreeze runs the common part of the v1 and v2 tests: the busy
// loop that left the job's session stops when the cgroup is frozen and
// runs again when it is thawed; a frozen job is killed whole.
func checkFreeze(t *testing.T, j *Job, pid int) {
	t.Helper()
	waitUntil(t, "the job's four processes", func() bool { return len(j.Procs()) >= 4 })
	procs := j.Procs()
	base := cpuTicks(procs)
	waitUntil(t, "the escaped busy loop to run", func() bool { return cpuTicks(procs) > base+5 })
	if err := j.Freeze(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !j.Frozen() {
		t.Fatal("not frozen after Freeze")
	}
	before := cpuTicks(procs)
	// Watching for what must not happen takes a window, not a poll.
	time.Sleep(frozenWindow)
	if after := cpuTicks(procs); after > before+1 {
		t.Fatalf("frozen job used %d ticks in %v", after-before, frozenWindow)
	}
	if err := j.Thaw(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	thawed := cpuTicks(procs)
	waitUntil(t, "the busy loop to run again", func() bool { return cpuTicks(procs) > thawed+5 })
	if err := j.Freeze(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	reap := func() { syscall.Wait4(pid, nil, syscall.WNOHANG, nil) }
	if err := j.Kill(10*time.Second, reap); err != nil {
		t.Fatalf("a frozen job: %v", err)
	}
	for _, p := range procs {
		waitUntil(t, fmt.Sprintf("process %d to die", p), func() bool { reap(); return !alive(p) })
	}
	if err := j.Remove(); err != nil {
		t.Fatal(err)
	}
}

// v1, the real kernel: the freezer hierarchy joins the job's cgroups.
func TestKernelFreezeV1(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hierarchy = HierarchyV1
	cfg.Controllers = []string{Memory}
	j, pid := escaperJob(t, cfg, "4.unit")
	if !j.CanFreeze() {
		t.Skip("no v1 freezer hierarchy here")
	}
	checkFreeze(t, j, pid)
}

// v2, the real kernel: cgroup.freeze.
func TestKernelFreezeV2(t *testing.T) {
	ensureCgroup2(t)
	j, pid := escaperJob(t, v2Bare(), "5.unit")
	if !j.CanFreeze() {
		t.Skip("the v2 hierarchy here has no cgroup.freeze")
	}
	checkFreeze(t, j, pid)
}
