package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/testcluster"
)

// A job on two moms: the mother superior's sister joins it (its own
// TMPDIR there, which the tasks there get; on the first node the tasks
// get the job's), pbsdsh runs a task on each node entry and pbs_tmrsh runs
// a command on the sister with the job's environment, its output, error
// and exit status coming back; a node outside the job is refused; at the
// end the sister's part is gone.
func TestSisterTasks(t *testing.T) {
	t.Parallel()
	c, n1, n2 := twoMoms(t)
	script := `#!/bin/sh
echo "job tmp $TMPDIR"
pbsdsh -v sh -c 'echo "task $PBS_TASKNUM node $PBS_NODENUM tmp $TMPDIR"'
echo "pbsdsh=$?"
pbs_tmrsh n2 'echo "remote $PBS_JOBID $TMPDIR"; echo to-stderr >&2; exit 3'
echo "rc=$?"
echo typed | pbs_tmrsh n2 cat
pbs_tmrsh n9 true
echo "bad=$?"
`
	id := c.Submit(script, "-N", "tasks", "-j", "oe", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	out := readFile(t, filepath.Join(c.Home, "tasks.o"+strconv.Itoa(testcluster.Seq(id))))
	// Each node's TMPDIR has a name of its own (pbs.<jobid>.<random>),
	// which the job and all its tasks there see.
	tmpOf := func(home string) string {
		m := regexp.MustCompile(regexp.QuoteMeta(filepath.Join(home, "tmp", "pbs."+id+".")) + `[a-z2-7]{12}\b`).FindString(out)
		if m == "" {
			t.Errorf("no TMPDIR in %s/tmp in the job's output:\n%s", home, out)
		}
		return m
	}
	tmp1, tmp2 := tmpOf(n1.Home), tmpOf(n2.Home)
	for _, want := range []string{
		"job tmp " + tmp1 + "\n", "task 1 node 0 tmp " + tmp1 + "\n", "task 2 node 1 tmp " + tmp2 + "\n", "pbsdsh=0\n",
		"remote " + id + " " + tmp2 + "\n", "to-stderr\n", "rc=3\n", "typed\n",
		"n9 is not a node of job " + id, "bad=255\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("job output lacks %q:\n%s", want, out)
		}
	}
	if ok, why := testcluster.Poll(20*time.Second, func() (bool, string) {
		for _, p := range []string{filepath.Join(n2.Home, "mom_priv", "jobs", id), tmp2} {
			if _, err := os.Stat(p); err == nil {
				return false, p + " is still there"
			}
		}
		return true, ""
	}); !ok {
		t.Errorf("the sister's part of the job was not removed: %s\n%s", why, n2.Log())
	}
}

// pbs_tmrsh and pbsdsh refuse outside a job, with a cookie that is not
// the job's, and into another user's job.
func TestTaskRefusals(t *testing.T) {
	t.Parallel()
	c, n1, _ := twoMoms(t)
	env := append(n1.Env(), "PBS_JOBID=", "PBS_JOBCOOKIE=")
	if r := c.RunEnv(env, "pbs_tmrsh", "n1", "true"); r.Code != 255 || !strings.Contains(r.Stderr, "not inside a PBS job") {
		t.Errorf("pbs_tmrsh outside a job: %s", r)
	}
	if r := c.RunEnv(env, "pbsdsh", "true"); r.Code != 1 || !strings.Contains(r.Stderr, "not inside a PBS job") {
		t.Errorf("pbsdsh outside a job: %s", r)
	}
	id := c.Submit("#!/bin/sh\necho \"cookie=$PBS_JOBCOOKIE\"\nsleep 60\n", "-N", "victim", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", id)
	out := filepath.Join(c.Home, "victim.o"+strconv.Itoa(testcluster.Seq(id)))
	var cookie string
	if ok, _ := testcluster.Poll(20*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(out)
		m := regexp.MustCompile(`cookie=([0-9a-f]+)`).FindSubmatch(b)
		if m == nil {
			return false, ""
		}
		cookie = string(m[1])
		return true, ""
	}); !ok {
		t.Fatalf("the job did not print its cookie")
	}
	forged := append(n1.Env(), "PBS_JOBID="+id, "PBS_JOBCOOKIE=0123")
	if r := c.RunEnv(forged, "pbs_tmrsh", "n2", "true"); r.Code != 255 || !strings.Contains(r.Stderr, "PBS_JOBCOOKIE does not match") {
		t.Errorf("pbs_tmrsh with a forged cookie: %s", r)
	}
	// Another user holding the job's own cookie still cannot start a task
	// in it (the job is root's).
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	r := c.RunEnvAs(append(n1.Env(), "PBS_JOBID="+id, "PBS_JOBCOOKIE="+cookie), &nobody, "", "pbs_tmrsh", "n2", "true")
	if r.Code != 255 || !strings.Contains(r.Stderr, "belongs to root") {
		t.Errorf("pbs_tmrsh into another user's job: %s", r)
	}
	c.MustRun("qdel", id)
	c.WaitJobState(id, "F", 30*time.Second)
}

// A task is killed at its job's end even when nothing waits for it
// (pbsdsh -o), on the sister and on the first node, and so is what a
// task left running in a session of its own; the cpu time of tasks on
// the sister counts in the job's resources_used.
func TestTasksEndWithJob(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	base := 10000 + os.Getpid()%10000*3
	m1, m2, m3 := strconv.Itoa(base), strconv.Itoa(base+1), strconv.Itoa(base+2)
	t.Cleanup(func() {
		for _, m := range []string{m1, m2, m3} {
			for _, pid := range processesWith(m) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	script := `#!/bin/sh
pbsdsh -o -n 1 sleep ` + m1 + `
pbsdsh -o -n 0 sleep ` + m2 + `
pbs_tmrsh n2 'setsid sleep ` + m3 + ` </dev/null >/dev/null 2>&1 & echo left'
echo "left=$?"
pbs_tmrsh n2 'dd if=/dev/zero bs=1M count=2500 2>/dev/null | md5sum >/dev/null'
echo "busy=$?"
`
	id := c.Submit(script, "-N", "ends", "-j", "oe", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	out := readFile(t, filepath.Join(c.Home, "ends.o"+strconv.Itoa(testcluster.Seq(id))))
	if !strings.Contains(out, "busy=0\n") || !strings.Contains(out, "left\nleft=0\n") {
		t.Errorf("job output: %q", out)
	}
	if ok, why := testcluster.Poll(20*time.Second, func() (bool, string) {
		for _, marker := range []string{m1, m2, m3} {
			if pids := processesWith(marker); len(pids) > 0 {
				return false, fmt.Sprintf("sleep %s still runs: %v", marker, pids)
			}
		}
		return true, ""
	}); !ok {
		t.Errorf("a task outlived its job: %s", why)
	}
	cput := attr(t, c, id, "resources_used.cput")
	secs, err := parseHMS(cput)
	if err != nil || secs < 2 {
		t.Errorf("resources_used.cput %q: want the sister's task's seconds of md5sum counted", cput)
	}
}

// A task that daemonizes, as Open MPI's orted does under pbs_tmrsh (fork,
// the parent exits, the child leaves the session a moment later): the
// caller gets the exit status of the command at once, while the daemon
// runs on inside the job, and dies at the job's end although it left the
// task's session.
func TestTaskDaemonLivesUntilJobEnd(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	mark := filepath.Join(t.TempDir(), "daemon")
	script := `#!/bin/sh
pbs_tmrsh n2 '(sleep 1; exec setsid sh -c "echo up > ` + mark + `; exec sleep 3004") </dev/null >/dev/null 2>&1 &'
echo "rsh=$?"
i=0
while [ ! -s ` + mark + ` ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done
cat ` + mark + `
`
	id := c.Submit(script, "-N", "daemon", "-j", "oe", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	out := readFile(t, filepath.Join(c.Home, "daemon.o"+strconv.Itoa(testcluster.Seq(id))))
	if out != "rsh=0\nup\n" {
		t.Errorf("job output %q: want pbs_tmrsh's status 0, then the daemon up", out)
	}
	if ok, why := testcluster.Poll(20*time.Second, func() (bool, string) {
		if pids := processesWith("3004"); len(pids) > 0 {
			return false, fmt.Sprintf("the daemon still runs: %v", pids)
		}
		return true, ""
	}); !ok {
		t.Errorf("a task's daemon outlived its job: %s", why)
	}
}

// Without a cgroup to freeze, suspend and resume reach what a task left
// running in a session of its own (Open MPI's orted and its ranks), on
// the first node and on the sister: SIGSTOP stops it, SIGCONT runs it
// again, and the job's end kills it.
func TestTaskDaemonSuspended(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	tag := fmt.Sprintf("pbstsd%d_", os.Getpid())
	loops := []string{tag + "loop", tag + "fork"} // killTagged's names
	killTagged(t, tag)
	script := "#!/bin/sh\n"
	for i, node := range []string{"n1", "n2"} {
		script += "pbs_tmrsh " + node + " \"setsid sh -c 'while :; do :; done' " + loops[i] + " </dev/null >/dev/null 2>&1 &\"\n"
	}
	script += "sleep 600\n"
	id := c.Submit(script, "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", id)
	// stopped reports whether every loop runs and is stopped (or not).
	stopped := func(want bool) (bool, string) {
		for _, m := range loops {
			pids := processesWith(m)
			if len(pids) != 1 {
				return false, fmt.Sprintf("%s: processes %v", m, pids)
			}
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pids[0]))
			s := string(b)
			f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
			if len(f) == 0 || (f[0] == "T") != want {
				return false, fmt.Sprintf("%s (pid %d) in state %v", m, pids[0], f[:min(len(f), 1)])
			}
		}
		return true, ""
	}
	testcluster.WaitFor(t, "the loops to run", 20*time.Second, func() (bool, string) { return stopped(false) })
	c.MustRun("qsig", "-s", "suspend", id)
	testcluster.WaitFor(t, "the loops to stop on suspend", 10*time.Second, func() (bool, string) { return stopped(true) })
	c.MustRun("qsig", "-s", "resume", id)
	testcluster.WaitFor(t, "the loops to run again on resume", 10*time.Second, func() (bool, string) { return stopped(false) })
	c.MustRun("qdel", id)
	c.WaitJobState(id, "F", 30*time.Second)
	testcluster.WaitFor(t, "the loops to die with the job", 20*time.Second, func() (bool, string) {
		for _, m := range loops {
			if pids := processesWith(m); len(pids) > 0 {
				return false, fmt.Sprintf("%s still runs: %v", m, pids)
			}
		}
		return true, ""
	})
}

// A sister that cannot join refuses; the start is undone, the job waits
// in its queue saying why, and runs once the sister joins.
func TestSisterJoinRefused(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{FaultBuild: true})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.AddMom("n1", testcluster.MomOptions{})
	c.SetFault("pbs_mom", fault.MomJoinJob+"=error")
	c.AddMom("n2", testcluster.MomOptions{})
	c.SetFault("pbs_mom", "")
	id := c.Submit("#!/bin/sh\npbsdsh -n 1 true\n", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	r := c.Run("qrun", id)
	if r.Code == 0 {
		t.Fatalf("qrun of a job whose sister refuses to join succeeded: %s", r)
	}
	if st, _ := c.JobAttr(id, "job_state"); st != "Q" {
		t.Errorf("job_state after the refused join %q, want Q", st)
	}
	if cm, _ := c.JobAttr(id, "comment"); !strings.Contains(cm, "sister node n2 cannot join") {
		t.Errorf("comment %q: want the sister named", cm)
	}
	// The fault fires once: the next start goes through.
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	if st := attr(t, c, id, "Exit_status"); st != "0" {
		t.Errorf("Exit_status %s", st)
	}
}

// parseHMS reads hh:mm:ss as seconds.
func parseHMS(s string) (int, error) {
	total := 0
	for _, part := range strings.Split(s, ":") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return 0, err
		}
		total = total*60 + n
	}
	return total, nil
}

// A job confined on both its nodes: a task on the sister, and what it
// left its session for, run in the job's cgroup there with the job's mem
// on that node as its limit; suspend and resume freeze and thaw them
// there too; at the end they die and no cgroup is left on either node.
func TestSisterConfinedAndSuspended(t *testing.T) {
	t.Parallel()
	conf1, tree1 := cgroupTree(t, "controllers memory\n")
	conf2, tree2 := cgroupTree(t, "controllers memory\n")
	if !tree2.Freezes() {
		t.Skip("this host's cgroups cannot freeze")
	}
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", "set server kill_delay = 2")
	c.AddMom("n1", testcluster.MomOptions{Files: map[string]string{cgroup.ConfigFile: conf1}})
	c.AddMom("n2", testcluster.MomOptions{Files: map[string]string{cgroup.ConfigFile: conf2}})
	tag := fmt.Sprintf("pbssis%d_", os.Getpid())
	killTagged(t, tag)
	t.Cleanup(func() {
		for _, pid := range processesWith(tag + "main") {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	remote := "setsid sh -c 'while :; do :; done' " + tag + "loop </dev/null >/dev/null 2>&1 & exec sh -c 'while :; do :; done' " + tag + "main"
	script := "#!/bin/sh\npbs_tmrsh n2 \"" + remote + "\" &\nsleep 600\n"
	id := c.Submit(script, "-l", "select=2:ncpus=1:mem=64mb", "-l", "place=scatter")
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
	for _, m := range busy {
		for _, pid := range processesWith(m) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
			if !strings.Contains(string(b), "/"+id+"\n") {
				t.Errorf("%s (pid %d) is not in the job's cgroup on the sister:\n%s", m, pid, b)
			}
		}
	}
	if ids := cgroupIDs(t, tree2); len(ids) != 1 || ids[0] != id {
		t.Errorf("cgroups on the sister while the job runs: %v", ids)
	}
	if ids := cgroupIDs(t, tree1); len(ids) != 1 || ids[0] != id {
		t.Errorf("cgroups on the first node while the job runs: %v", ids)
	}
	job2, err := tree2.Job(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range job2.Dirs {
		if slices.Contains(d.Controllers, "memory") {
			if b, _ := os.ReadFile(filepath.Join(d.Path, "memory.limit_in_bytes")); strings.TrimSpace(string(b)) != strconv.Itoa(64<<20) {
				t.Errorf("the sister's memory limit %q, want the job's 64mb there", b)
			}
		}
	}

	c.MustRun("qsig", "-s", "suspend", id)
	checkStill(t, busy, "on the sister while the job was suspended")
	c.MustRun("qsig", "-s", "resume", id)
	running("after resume")

	c.MustRun("qdel", id)
	c.WaitJobState(id, "F", 60*time.Second)
	waitFor(t, "the sister's tasks to die", 20*time.Second, func() bool {
		return len(processesWith(tag+"main")) == 0 && len(processesWith(tag+"loop")) == 0
	})
	waitFor(t, "no cgroup left on either node", 20*time.Second, func() bool {
		return len(cgroupIDs(t, tree1)) == 0 && len(cgroupIDs(t, tree2)) == 0
	})
}

// Killing the sister's mom mid-job: the job ends on its first node, and
// the task it left on the sister dies once that mom is back (the server
// tells it the job is over); a task on the first node dies at the job's
// end without its mom.
func TestSisterMomKilledMidJob(t *testing.T) {
	t.Parallel()
	c, n1, n2 := twoMoms(t)
	tag := fmt.Sprintf("%d", 4000+os.Getpid()%1000)
	tag2 := fmt.Sprintf("%d", 5000+os.Getpid()%1000)
	t.Cleanup(func() {
		for _, m := range []string{tag, tag2} {
			for _, pid := range processesWith(m) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	script := "#!/bin/sh\npbsdsh -o -n 1 sleep " + tag + "\npbsdsh -o -n 0 sleep " + tag2 + "\nwhile [ ! -e " + filepath.Join(c.Home, "go") + " ]; do sleep 0.2; done\n"
	id := c.Submit(script, "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", id)
	waitFor(t, "both tasks", 20*time.Second, func() bool { return len(processesWith(tag)) > 0 && len(processesWith(tag2)) > 0 })
	n2.Kill(syscall.SIGKILL)
	n2.WaitDown(10 * time.Second)
	n1.Kill(syscall.SIGKILL)
	n1.WaitDown(10 * time.Second)
	os.WriteFile(filepath.Join(c.Home, "go"), nil, 0o644)
	waitFor(t, "the first node's task to die with the job, its mom down", 20*time.Second, func() bool { return len(processesWith(tag2)) == 0 })
	n1.Start()
	c.WaitJobState(id, "F", 60*time.Second)
	n2.Start()
	waitFor(t, "the sister's task to die once its mom is back", 30*time.Second, func() bool { return len(processesWith(tag)) == 0 })
	waitFor(t, "the sister's part to go", 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(n2.Home, "mom_priv", "jobs", id))
		return err != nil
	})
}

// A sister's mom hangs: once its lease lapsed (its task is dead), the
// rerunnable job is killed on its first node and only then requeued,
// naming the node; a job that is not rerunnable ends. Back, the sister
// drops its part.
func TestSisterNodeFailureRequeues(t *testing.T) {
	t.Parallel()
	c, _, n2 := twoMoms(t, "set server node_fail_requeue = 2")
	task := fmt.Sprintf("%d", 6000+os.Getpid()%1000)
	main := fmt.Sprintf("%d", 7000+os.Getpid()%1000)
	t.Cleanup(func() {
		for _, m := range []string{task, main} {
			for _, pid := range processesWith(m) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	rerun := c.Submit("#!/bin/sh\npbsdsh -o -n 1 sleep "+task+"\nexec sleep "+main+"\n", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	once := c.Submit("#!/bin/sh\nsleep 300\n", "-r", "n", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", rerun)
	c.MustRun("qrun", once)
	waitFor(t, "the job and its task on the sister", 20*time.Second, func() bool {
		return len(processesWith(task)) > 0 && len(processesWith(main)) > 0
	})
	syscall.Kill(n1MomPid(t, n2), syscall.SIGSTOP) // the sister's mom hangs
	t.Cleanup(func() { syscall.Kill(n2.Pid(), syscall.SIGCONT) })
	c.WaitNodeState("n2", "down", 15*time.Second)
	c.WaitJobState(rerun, "Q", 30*time.Second)
	if pids := processesWith(main); len(pids) > 0 {
		t.Errorf("job %s requeued while its script still runs on its first node: %v", rerun, pids)
	}
	if pids := processesWith(task); len(pids) > 0 {
		t.Errorf("job %s requeued while its task still runs on the hung sister: %v", rerun, pids)
	}
	if got := attr(t, c, rerun, "comment"); !strings.Contains(got, "n2 down") {
		t.Errorf("requeued job comment %q", got)
	}
	c.WaitJobState(once, "F", 30*time.Second)
	if got := attr(t, c, once, "comment"); !strings.Contains(got, "not rerunnable") {
		t.Errorf("finished job comment %q", got)
	}
	syscall.Kill(n2.Pid(), syscall.SIGCONT)
	c.WaitNodeState("n2", "free", 15*time.Second)
	waitFor(t, "the sister's parts to go", 20*time.Second, func() bool {
		ents, _ := os.ReadDir(filepath.Join(n2.Home, "mom_priv", "jobs"))
		return len(ents) == 0
	})
}

// GPUs are assigned on every node of a job: its task on the sister sees
// the sister's GPU the job got there (the lowest free one).
func TestSisterGPUs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gpus := func(node string) string {
		var paths []string
		for i := 0; i < 2; i++ {
			p := filepath.Join(dir, node+"-nvidia"+strconv.Itoa(i))
			os.WriteFile(p, nil, 0o644)
			paths = append(paths, p)
		}
		return "$gpus " + strings.Join(paths, ",") + "\n"
	}
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.AddMom("n1", testcluster.MomOptions{Config: gpus("n1")})
	c.AddMom("n2", testcluster.MomOptions{Config: gpus("n2")})
	for _, n := range []string{"n1", "n2"} {
		waitFor(t, n+" to report its GPUs", 20*time.Second, func() bool { return nodeAttr(c, n, "resources_available.ngpus") == "2" })
	}
	first := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1:ngpus=1")
	c.MustRun("qrun", "-H", "n2", first)
	c.WaitJobState(first, "R", 20*time.Second)
	id := c.Submit("#!/bin/sh\npbsdsh sh -c 'echo \"node $PBS_NODENUM cvd=$CUDA_VISIBLE_DEVICES\"'\n", "-N", "gpus", "-l", "select=2:ncpus=1:ngpus=1", "-l", "place=scatter")
	c.MustRun("qrun", "-H", "n1+n2", id)
	c.WaitJobState(id, "F", 30*time.Second)
	out := readFile(t, filepath.Join(c.Home, "gpus.o"+strconv.Itoa(testcluster.Seq(id))))
	for _, want := range []string{"node 0 cvd=0\n", "node 1 cvd=1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	c.MustRun("qdel", first)
}
