package cgroup

import (
	"fmt"
	"github.com/gopbs/gopbs/internal/testcluster"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests use the running kernel's cgroups: they need root and the
// controllers, and skip without them. Their trees are made under the
// test process's own cgroup ("./"), so the jobs stay inside whatever
// confines the test itself.

// kernelTree opens a tree of its own for the test, removed at its end.
func kernelTree(t testing.TB, cfg Config) *Tree {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	sys, err := HostSystem()
	if err != nil {
		t.Skip(err)
	}
	cfg.Root = fmt.Sprintf("./pbs_unit_%d_%d", os.Getpid(), time.Now().UnixNano())
	tree, err := Open(cfg, sys)
	if err != nil {
		t.Skipf("this host cannot: %v", err)
	}
	t.Cleanup(func() {
		if err := tree.RemoveAll(5 * time.Second); err != nil {
			t.Errorf("tree left behind: %v", err)
		}
	})
	return tree
}

// escapeScript leaves processes the way jobs escape their session: a
// busy loop in a session of its own, a double fork, nohup; it writes
// its cpus to $1 and waits.
const escapeScript = `setsid sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
( sleep 300 & )
nohup sleep 301 </dev/null >/dev/null 2>&1 &
grep Cpus_allowed_list /proc/self/status > "$1"
exec sleep 302
`

// startEscaper starts escapeScript in j and returns its pid and the file
// its cpus go to.
func startEscaper(t *testing.T, j *Job) (int, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "cpus")
	pid, err := j.ForkExec("/bin/sh", []string{"sh", "-c", escapeScript, "sh", out}, &syscall.ProcAttr{
		Env: []string{"PATH=/usr/bin:/bin"}, Sys: &syscall.SysProcAttr{Setpgid: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL); syscall.Wait4(pid, nil, 0, nil) })
	return pid, out
}

// waitUntil polls cond for up to 20 s (testcluster's one polling loop).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testcluster.WaitFor(t, what, 20*time.Second, func() (bool, string) { return cond(), "not yet" })
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// A zombie ("Z") is dead; its parent has not reaped it yet.
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// checkEscapersKilled runs the common part of the v1 and v2 tests: the
// escaped processes are in the cgroup, counted (v2: v1 does not count
// cpu), and killed with it.
func checkEscapersKilled(t *testing.T, j *Job, pid int) {
	t.Helper()
	waitUntil(t, "the job's four processes", func() bool { return len(j.Procs()) >= 4 })
	if j.V2 {
		// The busy loop in its own session burns cpu the job is charged.
		waitUntil(t, "the escaped busy loop's cpu to count", func() bool { return j.Usage().CPUNanos > 200e6 })
	}
	procs := j.Procs()
	reap := func() { syscall.Wait4(pid, nil, syscall.WNOHANG, nil) }
	if err := j.Kill(10*time.Second, reap); err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		waitUntil(t, fmt.Sprintf("process %d to die", p), func() bool { reap(); return !alive(p) })
	}
	if u := j.Usage(); j.V2 && u.CPUNanos < 200e6 {
		t.Errorf("cpu after the kill %v", time.Duration(u.CPUNanos))
	}
	if err := j.Remove(); err != nil {
		t.Fatal(err)
	}
	if j.Exists() {
		t.Fatal("cgroup still there")
	}
}

// v1, the real kernel: the job's first process born in the job's
// cpuset, memory, cpu and pids cgroups; what escapes its session is
// still in them, counted and killed.
func TestKernelV1(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hierarchy = HierarchyV1
	cfg.Controllers = []string{Memory, Cpuset, CPU, Pids}
	tree := kernelTree(t, cfg)
	cpu := tree.CPUs()[len(tree.CPUs())-1]
	j, err := tree.Create("1.unit", Limits{Mem: 256 << 20, Cpus: CPUSet{cpu}, PidsMax: 64})
	if err != nil {
		t.Fatal(err)
	}
	pid, out := startEscaper(t, j)
	waitUntil(t, "the job's cpus", func() bool { b, _ := os.ReadFile(out); return strings.HasSuffix(string(b), "\n") })
	if got := read(t, out); got != "Cpus_allowed_list:\t"+strconv.Itoa(cpu) {
		t.Errorf("job sees %q, want cpu %d only", got, cpu)
	}
	// The caller (the shepherd) is back where it was.
	if procs := read(t, filepath.Join(j.Dirs[0].Path, "cgroup.procs")); strings.Contains(" "+procs+" ", " "+strconv.Itoa(os.Getpid())+" ") {
		t.Fatal("the forking process stayed in the job's cgroup")
	}
	checkEscapersKilled(t, j, pid)
}

// v2, the real kernel: the hierarchy here offers no controller (they
// are bound to v1), so this covers a job born in its cgroup (clone3),
// counted (cpu.stat) and killed whole (cgroup.kill); the controllers'
// files are covered by TestTreeV2Fake.
func TestKernelV2(t *testing.T) {
	ensureCgroup2(t)
	j, pid := escaperJob(t, v2Bare(), "2.unit")
	checkEscapersKilled(t, j, pid)
}

// v2Bare asks for the v2 hierarchy with no controller (this host's v2
// offers none).
func v2Bare() Config {
	cfg := DefaultConfig()
	cfg.Hierarchy = HierarchyV2
	cfg.Controllers = nil
	return cfg
}

// escaperJob runs escapeScript in a cgroup of a tree of its own, with
// no limits; it returns the cgroup and the script's pid.
func escaperJob(t *testing.T, cfg Config, id string) (*Job, int) {
	t.Helper()
	j, err := kernelTree(t, cfg).Create(id, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := startEscaper(t, j)
	return j, pid
}

// ensureCgroup2 mounts a cgroup2 file system on a temporary directory
// when the host shows none.
func ensureCgroup2(t *testing.T) {
	t.Helper()
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, m := range parseMountInfo(string(b)) {
		if m.v2 {
			return
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("none", dir, "cgroup2", 0, ""); err != nil {
		t.Skipf("cannot mount cgroup2: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// A job over its memory: the kernel kills within the job's cgroup and
// the count says so; the peak is the cgroup's.
func TestKernelOOM(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Controllers = []string{Memory}
	tree := kernelTree(t, cfg)
	j, err := tree.Create("3.unit", Limits{Mem: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := j.ForkExec("/bin/sh", []string{"sh", "-c", "head -c 300m /dev/zero | tail"}, &syscall.ProcAttr{Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	u := j.Usage()
	if u.OOMKills < 1 || j.OOMKills() != u.OOMKills {
		t.Fatalf("oom kills %d (%d), status %v", u.OOMKills, j.OOMKills(), ws)
	}
	if u.MemPeak < 16<<20 || u.MemPeak > 33<<20 {
		t.Errorf("peak %d with a 32 MiB limit", u.MemPeak)
	}
	if err := j.Destroy(5 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// The cost confinement adds to a job: make its cgroup (limits, a cpu),
// start its first process in it, kill, read and remove it, against the
// same start without (BenchmarkNoCgroup).
func BenchmarkJobCgroup(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Controllers = []string{Memory, Cpuset, CPU, Pids}
	tree := kernelTree(b, cfg)
	cpu := tree.CPUs()[0]
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		j, err := tree.Create(strconv.Itoa(i)+".bench", Limits{Mem: 1 << 30, Cpus: CPUSet{cpu}, PidsMax: 4096})
		if err != nil {
			b.Fatal(err)
		}
		pid, err := j.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
		if err != nil {
			b.Fatal(err)
		}
		syscall.Wait4(pid, nil, 0, nil)
		if err := j.Kill(time.Second, nil); err != nil {
			b.Fatal(err)
		}
		j.Usage()
		if err := j.Remove(); err != nil {
			b.Fatal(err)
		}
	}
}

// reportCPU resets the benchmark's timer and returns the function that
// reports the cpu time per job of the benchmark and its children: on a
// machine shared with other work, a steadier measure than the time.
func reportCPU(b *testing.B) func() {
	var before, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	b.ResetTimer()
	return func() {
		var after, kidsAfter syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kidsAfter)
		cpu := func(r syscall.Rusage) time.Duration {
			return time.Duration(r.Utime.Nano() + r.Stime.Nano())
		}
		used := cpu(after) - cpu(before) + cpu(kidsAfter) - cpu(kids)
		b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-us/op")
	}
}

func BenchmarkNoCgroup(b *testing.B) {
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
		if err != nil {
			b.Fatal(err)
		}
		syscall.Wait4(pid, nil, 0, nil)
	}
}
