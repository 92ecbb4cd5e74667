package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/testcluster"
)

// Confinement with cgroups, on the running kernel: these tests need root
// and the controllers, and skip without them. Each uses a tree of its
// own under the test process's own cgroups ("root ./name"), which its
// moms inherit: the jobs stay inside whatever confines the test.

var cgroupTrees atomic.Int64

// cgroupTree makes the mom_priv/cgroups text for a test (lines, plus a
// root of its own) and opens the same tree to look into it; the tree
// goes at the test's end.
func cgroupTree(t *testing.T, lines string) (string, *cgroup.Tree) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	text := lines + fmt.Sprintf("root ./pbs_it_%d_%d\n", os.Getpid(), cgroupTrees.Add(1))
	cfg, err := cgroup.ParseConfig(strings.NewReader(text), "cgroups")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := cgroup.HostSystem()
	if err != nil {
		t.Skip(err)
	}
	tree, err := cgroup.Open(cfg, sys)
	if err != nil {
		t.Skipf("this host cannot: %v", err)
	}
	t.Cleanup(func() {
		if err := tree.RemoveAll(5 * time.Second); err != nil {
			t.Errorf("tree left behind: %v", err)
		}
	})
	return text, tree
}

// cgroupCluster is a cluster whose one mom, n1, confines its jobs as
// lines say, in a tree of the test's own; scheduling is off.
func cgroupCluster(t *testing.T, lines string) (*testcluster.Cluster, *cgroup.Tree, *testcluster.Mom) {
	t.Helper()
	conf, tree := cgroupTree(t, lines)
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	m := c.AddMom("n1", testcluster.MomOptions{Files: map[string]string{cgroup.ConfigFile: conf}})
	return c, tree, m
}

// nodeAttr is a node's attribute as qmgr lists it.
func nodeAttr(c *testcluster.Cluster, node, name string) string {
	for _, line := range strings.Split(c.MustRun("qmgr", "-c", "list node "+node), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok && k == name {
			return v
		}
	}
	return ""
}

// cgroupIDs lists the jobs that have a cgroup in tree.
func cgroupIDs(t *testing.T, tree *cgroup.Tree) []string {
	t.Helper()
	ids, err := tree.List()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// processesWith finds the live processes whose command line holds
// marker (an argument of their own).
func processesWith(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains("\x00"+string(b), "\x00"+marker+"\x00") {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			s := string(st)
			if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// processCPU is the user and system time process pid has used, from
// /proc/PID/stat (in clock ticks of 1/100 s, as on every Linux we run on).
func processCPU(pid int) time.Duration {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(st)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// escapingJob is a job script that leaves processes the ways jobs escape
// their session (a busy loop under setsid, a double fork, nohup), each
// marked with tag, then runs main.
func escapingJob(tag, main string) string {
	return "#!/bin/sh\n" +
		"setsid sh -c 'while :; do :; done' " + tag + "loop </dev/null >/dev/null 2>&1 &\n" +
		"( sh -c 'sleep 600' " + tag + "fork & )\n" +
		"nohup sh -c 'sleep 600' " + tag + "nohup </dev/null >/dev/null 2>&1 &\n" +
		main + "\n"
}

// killTagged kills what escapingJob left, should a test fail.
func killTagged(t *testing.T, tag string) {
	t.Cleanup(func() {
		for _, m := range []string{"loop", "fork", "nohup"} {
			for _, pid := range processesWith(tag + m) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// runEscapingJob runs an escapingJob that ends by itself: while it runs
// the tree holds its cgroup alone; at its end what escaped is dead, its
// cpu (a busy loop in a session of its own) counted, its cgroup gone.
func runEscapingJob(t *testing.T, c *testcluster.Cluster, tree *cgroup.Tree, tag string) {
	t.Helper()
	killTagged(t, tag)
	// The job ends once the test has seen the busy loop burn more than a
	// second: on a loaded host a fixed few seconds may give it less.
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	done := filepath.Join(dir, "done")
	id := c.Submit(escapingJob(tag, "while [ ! -e "+done+" ]; do sleep 0.2; done"))
	c.MustRun("qrun", id)
	waitFor(t, "the job's escaped processes", 20*time.Second, func() bool { return len(processesWith(tag+"loop")) > 0 })
	if ids := cgroupIDs(t, tree); len(ids) != 1 || ids[0] != id {
		t.Errorf("cgroups while the job runs: %v", ids)
	}
	waitFor(t, "the busy loop to burn 1.5 s of cpu", 60*time.Second, func() bool {
		pids := processesWith(tag + "loop")
		return len(pids) > 0 && processCPU(pids[0]) >= 1500*time.Millisecond
	})
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.WaitJobState(id, "F", 60*time.Second)
	escapedGone(t, tag)
	if cput := attr(t, c, id, "resources_used.cput"); cput < "00:00:01" {
		t.Errorf("resources_used.cput %s: the escaped busy loop's cpu is not counted", cput)
	}
	waitFor(t, "no cgroup left", 10*time.Second, func() bool { return len(cgroupIDs(t, tree)) == 0 })
}

// escapedGone waits until nothing escapingJob left with tag lives.
func escapedGone(t *testing.T, tag string) {
	t.Helper()
	waitFor(t, "the escaped processes of "+tag+" to die", 20*time.Second, func() bool {
		for _, m := range []string{"loop", "fork", "nohup"} {
			if len(processesWith(tag+m)) > 0 {
				return false
			}
		}
		return true
	})
}

// A job over its memory: the kernel kills within the job's cgroup, the
// shepherd ends the rest of the job at once, and the job ends as killed
// by SIGKILL (Exit_status 265, as OpenPBS reports a signal), with a
// comment naming the limit, in its E record and its error file; its
// resources_used.mem is the cgroup's peak.
func TestCgroupMemoryLimitKillsJob(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	conf, _ := cgroupTree(t, "controllers memory,cpuset,cpu\n")
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", testcluster.FreePort(t))
	c.AddMom("n1", testcluster.MomOptions{Files: map[string]string{cgroup.ConfigFile: conf}, Conf: "PBS_MOM_METRICS=" + metricsAddr + "\n"})
	out := t.TempDir()
	os.Chmod(out, 0o755)
	id := c.Submit("#!/bin/sh\nhead -c 400m /dev/zero | tail\necho survived\nsleep 120\n",
		"-l", "select=1:ncpus=1:mem=64mb", "-o", filepath.Join(out, "o"), "-e", filepath.Join(out, "e"))
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "265" {
		t.Errorf("Exit_status %s, want 265 (256 + SIGKILL)", got)
	}
	const why = "Job killed: memory limit of 64mb exceeded on node n1 (cgroup)"
	if got := attr(t, c, id, "comment"); got != why {
		t.Errorf("comment %q, want %q", got, why)
	}
	if got := readFile(t, filepath.Join(out, "e")); !strings.Contains(got, "PBS: "+why) {
		t.Errorf("error file lacks the reason:\n%s", got)
	}
	mem := attr(t, c, id, "resources_used.mem")
	kb, _ := strconv.ParseInt(strings.TrimSuffix(mem, "kb"), 10, 64)
	if kb < 16<<10 || kb > 66<<10 {
		t.Errorf("resources_used.mem %s, want the cgroup's peak (at most the 64mb limit)", mem)
	}
	var rec string
	for _, line := range strings.Split(c.WaitAccounting(";E;"+id+";"), "\n") {
		if strings.Contains(line, ";E;"+id+";") {
			rec = line
		}
	}
	if !strings.Contains(rec, "Exit_status=265") {
		t.Errorf("E record %q lacks Exit_status=265", rec)
	}
	// The mom counts the kill in its metrics.
	s, err := testcluster.Scrape("http://" + metricsAddr + metrics.Path)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get(metrics.MomOOMKills); v != 1 {
		t.Errorf("%s = %v, want 1", metrics.MomOOMKills, v)
	}
}

// Processes that leave the job's session (setsid, a double fork, nohup)
// are killed when the job ends by itself and when it is deleted, and the
// cpu they burned is the job's.
func TestCgroupEscapedProcessesKilledAndCounted(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	c, tree, _ := cgroupCluster(t, "controllers memory\n")

	tag := fmt.Sprintf("pbsesc%d_", os.Getpid())
	runEscapingJob(t, c, tree, tag)

	tag2 := tag + "del_"
	killTagged(t, tag2)
	deleted := c.Submit(escapingJob(tag2, "sleep 300"))
	c.MustRun("qrun", deleted)
	waitFor(t, "the deleted job's escaped processes", 20*time.Second, func() bool {
		return len(processesWith(tag2+"loop")) > 0 && len(processesWith(tag2+"nohup")) > 0 && len(processesWith(tag2+"fork")) > 0
	})
	c.MustRun("qdel", deleted)
	c.WaitJobState(deleted, "F", 60*time.Second)
	escapedGone(t, tag2)
	waitFor(t, "no cgroup left", 10*time.Second, func() bool { return len(cgroupIDs(t, tree)) == 0 })
}

// cpusAllowed is the Cpus_allowed_list a job printed.
var cpusAllowed = regexp.MustCompile(`Cpus_allowed_list:\s*(\S+)`)

// Each job sees only its own cpus; with more cpus promised than the host
// has, a job that finds none free gets a quota of its ncpus instead. The
// node offers its memory less mem_reserved, which is the limit of a job
// that asks for no mem.
func TestCgroupCpusets(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	c, tree, _ := cgroupCluster(t, "controllers memory,cpuset,cpu\nmem_reserved 1gb\n")
	var total int64
	for _, line := range strings.Split(readFile(t, "/proc/meminfo"), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "MemTotal:" {
			total, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	offered := total - 1<<20 // kb
	if got := nodeAttr(c, "n1", "resources_available.mem"); got != strconv.FormatInt(offered, 10)+"kb" {
		t.Errorf("resources_available.mem %s, want %dkb (MemTotal less 1gb)", got, offered)
	}
	all := tree.CPUs()
	if len(all) < 2 {
		t.Skipf("needs 2 cpus, the tree has %v", all)
	}
	c.MustRun("qmgr", "-c", fmt.Sprintf("set node n1 resources_available.ncpus = %d", len(all)+1))
	out := t.TempDir()
	os.Chmod(out, 0o755)
	script := "#!/bin/sh\ngrep Cpus_allowed_list /proc/self/status\nsleep 300\n"
	var ids []string
	for i := 0; i <= len(all); i++ {
		id := c.Submit(script, "-l", "select=1:ncpus=1", "-o", filepath.Join(out, strconv.Itoa(i)))
		c.MustRun("qrun", id)
		ids = append(ids, id)
	}
	seen := map[string]string{}
	for i, id := range ids {
		path := filepath.Join(out, strconv.Itoa(i))
		waitFor(t, id+"'s cpus", 20*time.Second, func() bool { b, _ := os.ReadFile(path); return cpusAllowed.Match(b) })
		got := cpusAllowed.FindStringSubmatch(readFile(t, path))[1]
		if i == len(all) {
			// None left: the node's cpus, at most one cpu's time.
			if got != all.String() {
				t.Errorf("the job without a cpu of its own sees %s, want the node's %s", got, all)
			}
			j, err := tree.Job(id)
			if err != nil {
				t.Fatal(err)
			}
			quota := ""
			for _, d := range j.Dirs {
				if b, err := os.ReadFile(filepath.Join(d.Path, "cpu.cfs_quota_us")); err == nil {
					quota = strings.TrimSpace(string(b))
				} else if b, err := os.ReadFile(filepath.Join(d.Path, "cpu.max")); err == nil {
					quota = strings.Fields(string(b))[0]
				}
			}
			if quota != "100000" {
				t.Errorf("cpu quota %q, want one cpu's (100000 per 100000 us)", quota)
			}
			if lim := readFile(t, filepath.Join(j.Dirs[0].Path, "memory.limit_in_bytes")); lim != strconv.FormatInt(offered<<10, 10)+"\n" {
				t.Errorf("memory limit of a job without mem %q, want %d", lim, offered<<10)
			}
			continue
		}
		if _, err := strconv.Atoi(got); err != nil {
			t.Errorf("job %d sees cpus %s, want one", i, got)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("jobs %s and %s share cpu %s", other, id, got)
		}
		seen[got] = id
	}
	for _, id := range ids {
		c.MustRun("qdel", id)
	}
	for _, id := range ids {
		c.WaitJobState(id, "F", 60*time.Second)
	}
	waitFor(t, "no cgroup left", 10*time.Second, func() bool { return len(cgroupIDs(t, tree)) == 0 })
}

// After 50 jobs the tree holds only the cgroups of the jobs still
// running; a job that fails before its script runs leaves none either.
func TestCgroupNoneLeftBehind(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	c, tree, _ := cgroupCluster(t, "controllers memory,cpuset,cpu,pids\npids_max 512\n")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 8")
	c.StartScheduler("pbs_sched")
	long := c.Submit("#!/bin/sh\nsleep 300\n")
	c.WaitJobState(long, "R", 30*time.Second)
	r := c.RunStdin("#!/bin/sh\n( sleep 1 & )\ntrue\n", "qsub", "-J", "1-50", "-o", "/dev/null", "-e", "/dev/null")
	if r.Code != 0 {
		t.Fatal(r)
	}
	array := strings.TrimSpace(r.Stdout)
	c.WaitJobState(array, "F", 120*time.Second)
	waitFor(t, "only the running job's cgroup", 10*time.Second, func() bool {
		ids := cgroupIDs(t, tree)
		return len(ids) == 1 && ids[0] == long
	})
	if got := attr(t, c, array, "Exit_status"); got != "0" {
		t.Errorf("array Exit_status %s", got)
	}
	failed := c.Submit("#!/bin/sh\ntrue\n", "-o", "/nonexistent/dir/out")
	c.WaitJobState(failed, "F", 60*time.Second)
	if got := attr(t, c, failed, "Exit_status"); got != "-1" {
		t.Errorf("job whose output cannot be opened: Exit_status %s", got)
	}
	c.MustRun("qdel", long)
	c.WaitJobState(long, "F", 60*time.Second)
	waitFor(t, "no cgroup left", 10*time.Second, func() bool { return len(cgroupIDs(t, tree)) == 0 })
}

// A mom that restarts keeps the cgroup of the job still running and
// removes one no job owns, killing what is in it; a mom that cannot make
// a job's cgroup refuses the start, and the job waits in its queue.
func TestCgroupMomRestartAndRefusedStart(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	c, tree, m := cgroupCluster(t, "controllers memory,cpuset\n")
	id := c.Submit("#!/bin/sh\nsleep 300\n")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "R", 30*time.Second)
	waitFor(t, "the job's cgroup", 10*time.Second, func() bool { ids := cgroupIDs(t, tree); return len(ids) == 1 && ids[0] == id })

	m.Kill(syscall.SIGKILL)
	m.WaitDown(10 * time.Second)
	stale, err := tree.Create("999.gone", cgroup.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := stale.ForkExec("/bin/sleep", []string{"sleep", "600"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL); syscall.Wait4(pid, nil, 0, nil) })
	m.Start()
	waitFor(t, "the stale cgroup to go", 20*time.Second, func() bool { ids := cgroupIDs(t, tree); return len(ids) == 1 && ids[0] == id })
	var ws syscall.WaitStatus
	if got, err := syscall.Wait4(pid, &ws, 0, nil); got != pid || err != nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the stale cgroup's process: %v %v %v", got, err, ws)
	}
	if st, _ := c.JobAttr(id, "job_state"); st != "R" {
		t.Errorf("the running job is %q after its mom restarted", st)
	}
	c.MustRun("qdel", id)
	c.WaitJobState(id, "F", 60*time.Second)
	waitFor(t, "no cgroup left", 10*time.Second, func() bool { return len(cgroupIDs(t, tree)) == 0 })

	// The tree gone from under the mom: it cannot confine the next job,
	// so it refuses it.
	if err := tree.RemoveAll(time.Second); err != nil {
		t.Fatal(err)
	}
	next := c.Submit("#!/bin/sh\ntrue\n")
	r := c.Run("qrun", next)
	if r.Code == 0 {
		t.Errorf("qrun of a job its mom cannot confine: %s", r)
	}
	if st, _ := c.JobAttr(next, "job_state"); st != "Q" {
		t.Errorf("refused job is %q, want Q", st)
	}
	if got := attr(t, c, next, "comment"); !strings.Contains(got, "cannot make the job's cgroup") {
		t.Errorf("refused job's comment %q", got)
	}
}

// v2, on the running kernel (its hierarchy here offers no controller,
// they are bound to v1, so no limit): the job is born in its cgroup,
// what escapes its session is killed at its end and its cpu counted.
func TestCgroupV2Job(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	c, tree, _ := cgroupCluster(t, "hierarchy v2\ncontrollers none\n")
	runEscapingJob(t, c, tree, fmt.Sprintf("pbsv2esc%d_", os.Getpid()))
}

// A bad line in mom_priv/cgroups stops the mom naming the file and the
// line, as does confinement the host cannot give.
func TestCgroupBadConfigStopsMom(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	c := testcluster.New(t, testcluster.Options{})
	for i, tc := range []struct{ conf, want string }{
		{"enabled true\nfrobnicate 1\n", "mom_priv/cgroups:2: unknown key"},
		{"hierarchy v2\ncontrollers devices\n", "mom_priv/cgroups: controller devices needs hierarchy v1"},
		{"hierarchy v2\ncontrollers memory\nroot ./x\n", "mom_priv/cgroups: hierarchy v2"},
	} {
		m := c.AddMomNoWait(fmt.Sprintf("bad%d", i), testcluster.MomOptions{Files: map[string]string{cgroup.ConfigFile: tc.conf}})
		if code := m.WaitExit(20 * time.Second); code == 0 || !strings.Contains(m.Log(), tc.want) {
			t.Errorf("mom with %q: exit %d, log:\n%s", tc.conf, code, m.Log())
		}
	}
}

// cpuTicksOf is the cpu time, in clock ticks, of the live processes
// whose command line holds marker.
func cpuTicksOf(marker string) int64 {
	var sum int64
	for _, p := range shepherd.ProcStats(processesWith(marker)) {
		sum += p.CPUTicks
	}
	return sum
}

// frozenWindow is how long a suspended job is watched for cpu it must
// not get: a busy loop would take 50 ticks in it.
const frozenWindow = 500 * time.Millisecond

// Suspend freezes the job's whole cgroup (v1: the freezer hierarchy):
// the script's own busy loop and one that left its session (setsid)
// both stop using cpu, and both run again on resume; the server's side
// is as before (S, then R). A suspended job is deleted whole.
func TestCgroupSuspendFreezesWholeJob(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	checkSuspendFreezes(t, "controllers memory\n", "pbsfrz")
}

// checkStill checks that the busy loops marked by busy use no cpu for a
// while (a suspended job's).
func checkStill(t *testing.T, busy []string, when string) {
	t.Helper()
	before := map[string]int64{}
	for _, m := range busy {
		before[m] = cpuTicksOf(m)
	}
	// Watching for what must not happen takes a window, not a poll.
	time.Sleep(frozenWindow)
	for _, m := range busy {
		if used := cpuTicksOf(m) - before[m]; used > 1 {
			t.Errorf("%s used %d ticks in %v %s", m, used, frozenWindow, when)
		}
	}
}

// The same with v2's cgroup.freeze.
func TestCgroupV2SuspendFreezesWholeJob(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	checkSuspendFreezes(t, "hierarchy v2\ncontrollers none\n", "pbsfrz2")
}

// checkSuspendFreezes runs a job confined as lines say through suspend,
// resume, suspend and qdel.
func checkSuspendFreezes(t *testing.T, lines, prefix string) {
	t.Helper()
	c, tree, _ := cgroupCluster(t, lines)
	if !tree.Freezes() {
		t.Skip("this host's cgroups cannot freeze")
	}
	tag := fmt.Sprintf("%s%d_", prefix, os.Getpid())
	killTagged(t, tag)
	t.Cleanup(func() {
		for _, pid := range processesWith(tag + "main") {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	id := c.Submit(escapingJob(tag, "exec sh -c 'while :; do :; done' "+tag+"main"))
	c.MustRun("qrun", id)
	busy := []string{tag + "main", tag + "loop"}
	running := func(what string) {
		t.Helper()
		for _, m := range busy {
			base := cpuTicksOf(m)
			waitFor(t, m+" to use cpu "+what, 20*time.Second, func() bool { return cpuTicksOf(m) > base+5 })
		}
	}
	running("at the start")

	c.MustRun("qsig", "-s", "suspend", id)
	if st := attr(t, c, id, "job_state"); st != "S" {
		t.Fatalf("after suspend: %q", st)
	}
	checkStill(t, busy, "while the job was suspended")

	c.MustRun("qsig", "-s", "resume", id)
	if st := attr(t, c, id, "job_state"); st != "R" {
		t.Fatalf("after resume: %q", st)
	}
	running("after resume")

	c.MustRun("qsig", "-s", "suspend", id)
	c.MustRun("qdel", id)
	c.WaitJobState(id, "F", 60*time.Second)
	escapedGone(t, tag)
	waitFor(t, "the script's loop to die", 20*time.Second, func() bool { return len(processesWith(tag+"main")) == 0 })
	waitFor(t, "no cgroup left", 10*time.Second, func() bool { return len(cgroupIDs(t, tree)) == 0 })
}
