package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/testcluster"
)

// twoMoms is a cluster with nodes n1 and n2, each its own mom (and
// PBS_HOME) on this host, and node liveness checked every 3 seconds.
// settings are further qmgr commands, run before the moms first report
// (the lease a mom is granted follows the settings of its last report).
func twoMoms(t *testing.T, settings ...string) (*testcluster.Cluster, *testcluster.Mom, *testcluster.Mom) {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.MustRun("qmgr", "-c", "set server kill_delay = 2")
	for _, cmd := range settings {
		c.MustRun("qmgr", "-c", cmd)
	}
	n1 := c.AddMom("n1", testcluster.MomOptions{})
	n2 := c.AddMom("n2", testcluster.MomOptions{})
	return c, n1, n2
}

// waitReports waits until mom m has made n more status reports to the
// server than when it was called, calling during (if any) at each look.
// Every report renews the jobs' lease, a new file each time (written by a
// rename), so each change of the file is a report; a report under way at
// the call counts, so n = 2 proves a whole report after it.
func waitReports(t *testing.T, m *testcluster.Mom, n int, timeout time.Duration, during func()) {
	t.Helper()
	path := shepherd.LeasePath(filepath.Join(m.Home, "mom_priv", "jobs"))
	version := func() string {
		fi, err := os.Stat(path)
		if err != nil {
			return err.Error()
		}
		b, _ := os.ReadFile(path)
		return fmt.Sprint(fi.ModTime().UnixNano(), fi.Sys().(*syscall.Stat_t).Ino, string(b))
	}
	last, seen := version(), 0
	testcluster.WaitFor(t, fmt.Sprintf("%d status reports of %s", n, m.Name), timeout, func() (bool, string) {
		if during != nil {
			during()
		}
		if v := version(); v != last {
			last, seen = v, seen+1
		}
		return seen >= n, fmt.Sprintf("%d seen", seen)
	})
}

// jobResult waits until the shepherd of job id on mom m has written the
// job's result: the job has ended, whether or not its mom runs.
func jobResult(t *testing.T, m *testcluster.Mom, id string, timeout time.Duration) {
	t.Helper()
	path := filepath.Join(m.Home, "mom_priv", "jobs", id, shepherd.FileResult)
	testcluster.WaitFor(t, "the end of job "+id+" on "+m.Name, timeout, func() (bool, string) {
		_, err := os.Stat(path)
		return err == nil, fmt.Sprint(err)
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(b)
}

func attr(t *testing.T, c *testcluster.Cluster, id, name string) string {
	t.Helper()
	v, _ := c.JobAttr(id, name)
	return v
}

// A job runs for real: its output files hold what it printed, its
// environment is the PBS one, it starts in the owner's home, and its exit
// code comes back as Exit_status.
func TestJobRunsWithItsEnvironmentAndExitStatus(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	script := `#!/bin/sh
#PBS -N envjob
echo "jobid=$PBS_JOBID"
echo "name=$PBS_JOBNAME"
echo "queue=$PBS_QUEUE"
echo "workdir=$PBS_O_WORKDIR"
echo "ncpus=$PBS_NCPUS/$NCPUS"
echo "environment=$PBS_ENVIRONMENT"
echo "pwd=$(pwd)"
echo "home=$HOME"
echo "nodes=$(cat $PBS_NODEFILE | tr '\n' ' ')"
test -d "$TMPDIR" && echo "tmpdir=ok"
echo "custom=$MYVAR"
echo oops >&2
exit 7
`
	id := c.Submit(script, "-l", "select=1:ncpus=2", "-v", "MYVAR=hello")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 20*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "7" {
		t.Fatalf("Exit_status %q, want 7", got)
	}
	if got := attr(t, c, id, "exec_host"); !regexp.MustCompile(`^n[12]/0\*2$`).MatchString(got) {
		t.Fatalf("exec_host %q", got)
	}
	seq := strings.SplitN(id, ".", 2)[0]
	out := readFile(t, filepath.Join(c.Home, "envjob.o"+seq))
	home := "/"
	if u, err := user.Current(); err == nil {
		home = u.HomeDir
	}
	for _, want := range []string{"jobid=" + id, "name=envjob", "queue=workq", "workdir=" + c.Home, "ncpus=2/2",
		"environment=PBS_BATCH", "pwd=" + home, "home=" + home, "tmpdir=ok", "custom=hello"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`nodes=n[12] \n`).MatchString(out) {
		t.Errorf("PBS_NODEFILE content:\n%s", out)
	}
	if got := readFile(t, filepath.Join(c.Home, "envjob.e"+seq)); got != "oops\n" {
		t.Errorf("error file %q", got)
	}
	for _, a := range []string{"resources_used.walltime", "resources_used.cput", "resources_used.mem"} {
		if _, ok := c.JobAttr(id, a); !ok {
			t.Errorf("finished job lacks %s", a)
		}
	}
	acct := c.WaitAccounting(";S;"+id+";", ";E;"+id+";")
	for _, rec := range []string{";S;" + id + ";", ";E;" + id + ";"} {
		if strings.Count(acct, rec) != 1 {
			t.Errorf("accounting has %d %q records", strings.Count(acct, rec), rec)
		}
	}
	if !strings.Contains(acct, "Exit_status=7") {
		t.Errorf("E record lacks Exit_status=7:\n%s", acct)
	}
}

// A two-node job sees both hosts in PBS_NODEFILE (select and nodes forms),
// and an empty output file is still created; -j oe joins the streams.
func TestMultiNodeJob(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	for _, spec := range [][]string{{"-l", "select=2:ncpus=1", "-l", "place=scatter"}, {"-l", "nodes=2:ppn=1"}} {
		id := c.Submit("#!/bin/sh\nsort $PBS_NODEFILE | tr '\\n' ' '\necho to-stderr >&2\n", append([]string{"-N", "multi", "-j", "oe"}, spec...)...)
		c.MustRun("qrun", id)
		c.WaitJobState(id, "F", 20*time.Second)
		seq := strings.SplitN(id, ".", 2)[0]
		out := readFile(t, filepath.Join(c.Home, "multi.o"+seq))
		if out != "n1 n2 to-stderr\n" {
			t.Errorf("%v: joined output %q, want both nodes then stderr", spec, out)
		}
		if got := attr(t, c, id, "exec_host"); got != "n1/0+n2/0" {
			t.Errorf("%v: exec_host %q", spec, got)
		}
		if _, err := os.Stat(filepath.Join(c.Home, "multi.e"+seq)); err == nil {
			t.Errorf("%v: -j oe still created an error file", spec)
		}
	}
	id := c.Submit("#!/bin/sh\ntrue\n", "-N", "quiet")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 20*time.Second)
	seq := strings.SplitN(id, ".", 2)[0]
	for _, f := range []string{"quiet.o" + seq, "quiet.e" + seq} {
		if st, err := os.Stat(filepath.Join(c.Home, f)); err != nil || st.Size() != 0 {
			t.Errorf("%s: want an empty file, got %v", f, err)
		}
	}
}

// Walltime and qdel kill running jobs.
func TestWalltimeAndQdelKill(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	wall := c.Submit("#!/bin/sh\nsleep 60\n", "-l", "walltime=2", "-N", "wall")
	del := c.Submit("#!/bin/sh\nsleep 60\n", "-N", "del")
	c.MustRun("qrun", wall)
	c.MustRun("qrun", del)
	c.WaitJobState(del, "R", 10*time.Second)
	c.MustRun("qdel", del)
	c.WaitJobState(del, "F", 20*time.Second)
	if got := attr(t, c, del, "Exit_status"); got != "271" {
		t.Errorf("qdel'd job Exit_status %q, want 271", got)
	}
	// A delete right after the start, before the job's process may exist,
	// still ends it.
	for i := 0; i < 4; i++ {
		id := c.Submit("#!/bin/sh\nsleep 60\n")
		c.MustRun("qrun", id)
		c.MustRun("qdel", id)
		c.WaitJobState(id, "F", 20*time.Second)
		if got := attr(t, c, id, "Exit_status"); got != "271" {
			t.Errorf("job deleted at once: Exit_status %q, want 271", got)
		}
	}
	c.WaitJobState(wall, "F", 20*time.Second)
	if got := attr(t, c, wall, "Exit_status"); got != "-29" {
		t.Errorf("walltime job Exit_status %q, want -29", got)
	}
	if got := attr(t, c, wall, "comment"); !strings.Contains(got, "walltime") {
		t.Errorf("walltime job comment %q", got)
	}
	seq := strings.SplitN(wall, ".", 2)[0]
	if e := readFile(t, filepath.Join(c.Home, "wall.e"+seq)); !strings.Contains(e, "PBS: job killed: walltime") {
		t.Errorf("walltime job's error file %q", e)
	}
}

// Processes a job leaves behind die with it: one still its child, and
// one orphaned while the job ran (its parent ended first).
func TestLeftoverProcessesDieWithJob(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	script := fmt.Sprintf("#!/bin/sh\nsleep 300 &\necho $! > %[1]s/child\n(sleep 300 & echo $! > %[1]s/orphan)\nsleep 1\n", dir)
	id := c.Submit(script)
	c.MustRun("qrun", "-H", "n1", id)
	// Its shepherd is the static pbs_shepherd installed beside pbs_mom.
	pidFile := filepath.Join(c.Mom("n1").Home, "mom_priv", "jobs", id, "shepherd.pid")
	shepherd := strconv.Itoa(waitPidFile(t, pidFile))
	if exe, err := os.Readlink("/proc/" + shepherd + "/exe"); err != nil || filepath.Base(exe) != "pbs_shepherd" {
		t.Errorf("the job's shepherd runs %q (%v), want pbs_shepherd", exe, err)
	}
	c.WaitJobState(id, "F", 20*time.Second)
	for _, name := range []string{"child", "orphan"} {
		pid := strings.TrimSpace(readFile(t, filepath.Join(dir, name)))
		testcluster.WaitFor(t, "the job's "+name+" process "+pid+" gone with it", 10*time.Second, func() (bool, string) {
			b, err := os.ReadFile("/proc/" + pid + "/stat")
			// Gone, or a zombie about to be reaped.
			return err != nil || strings.Contains(string(b), ") Z "), string(b)
		})
	}
}

// kill -9 of the mom while a job runs: the job goes on, and the exit
// status it reaches while no mom runs is reported once the mom is back.
func TestMomKill9KeepsJobAndExitStatus(t *testing.T) {
	t.Parallel()
	c, n1, _ := twoMoms(t)
	id := c.Submit("#!/bin/sh\nsleep 3\nexit 7\n")
	c.MustRun("qrun", "-H", "n1", id)
	c.WaitJobState(id, "R", 10*time.Second)
	n1.Kill(syscall.SIGKILL)
	jobResult(t, n1, id, 20*time.Second) // the job ends while n1 has no mom
	if st := attr(t, c, id, "job_state"); st != "R" {
		t.Fatalf("job state %q while its mom is down", st)
	}
	n1.Start()
	c.WaitJobState(id, "F", 20*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "7" {
		t.Fatalf("Exit_status %q after the mom restart, want 7", got)
	}
}

// Restarting the server keeps running jobs running; an exit that happens
// while it is down is delivered when it returns, exactly once.
func TestServerRestartDuringJob(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	id := c.Submit("#!/bin/sh\nsleep 3\nexit 5\n")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "R", 10*time.Second)
	mom := c.Mom(firstHost(attr(t, c, id, "exec_host")))
	c.KillServer(syscall.SIGKILL)
	jobResult(t, mom, id, 20*time.Second) // the job ends while the server is down
	c.StartServer()
	c.WaitJobState(id, "F", 30*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "5" {
		t.Fatalf("Exit_status %q, want 5", got)
	}
	// A duplicate report would come on the mom's connection before its
	// next status report but one.
	waitReports(t, mom, 2, 20*time.Second, nil)
	acct := c.Accounting()
	if n := strings.Count(acct, ";E;"+id+";"); n != 1 {
		t.Fatalf("%d end records for %s", n, id)
	}
}

// A mom that stops reporting makes its node down; after node_fail_requeue
// a rerunnable job is requeued, another is finished. The old copy is dead
// before the job is requeued, although its mom is still stopped (its
// shepherd fenced it when the lease lapsed): a job never runs in two
// places.
func TestNodeFailureRequeues(t *testing.T) {
	t.Parallel()
	c, n1, _ := twoMoms(t, "set server node_fail_requeue = 2")
	pidFile := filepath.Join(c.Home, "rerun.pid")
	rerun := c.Submit(fmt.Sprintf("#!/bin/sh\necho $$ > %s\nsleep 300\n", pidFile))
	once := c.Submit("#!/bin/sh\nsleep 300\n", "-r", "n")
	c.MustRun("qrun", "-H", "n1", rerun)
	c.MustRun("qrun", "-H", "n1", once)
	c.WaitJobState(rerun, "R", 10*time.Second)
	c.WaitJobState(once, "R", 10*time.Second)
	pid := waitPidFile(t, pidFile)
	syscall.Kill(n1MomPid(t, n1), syscall.SIGSTOP) // the mom hangs: no more reports
	c.WaitNodeState("n1", "down", 15*time.Second)
	c.WaitJobState(rerun, "Q", 15*time.Second)
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("job %s requeued while its old process %d still runs on n1", rerun, pid)
	}
	if got := attr(t, c, rerun, "comment"); !strings.Contains(got, "n1 down") {
		t.Errorf("requeued job comment %q", got)
	}
	c.WaitJobState(once, "F", 15*time.Second)
	if got := attr(t, c, once, "comment"); !strings.Contains(got, "not rerunnable") {
		t.Errorf("finished job comment %q", got)
	}
	syscall.Kill(n1MomPid(t, n1), syscall.SIGCONT)
	c.WaitNodeState("n1", "free", 15*time.Second)
	testcluster.WaitFor(t, fmt.Sprintf("the requeued job's old process %d gone from n1", pid), 15*time.Second, func() (bool, string) {
		return syscall.Kill(pid, 0) != nil, "still running"
	})
}

func n1MomPid(t *testing.T, m *testcluster.Mom) int {
	t.Helper()
	pid := m.Pid()
	if pid == 0 {
		t.Fatal("mom not running")
	}
	return pid
}

// Jobs run as their owner (the mom runs as root), and commands typed on a
// mom's host reach the server through that mom with the caller's identity.
func TestJobsRunAsOwnerAndMomForwardsCommands(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	c, n1, _ := twoMoms(t)
	outDir := filepath.Join(c.Home, "out")
	os.Mkdir(outDir, 0o777)
	os.Chmod(outDir, 0o777)
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	// Submitted on n1's host: through n1's mom.
	r := c.RunEnvAs(n1.Env(), &nobody, "#!/bin/sh\nid -u\n", "qsub", "-o", outDir+"/", "-e", outDir+"/", "-N", "whoami")
	if r.Code != 0 {
		t.Fatalf("qsub through the mom: %s\n%s", r, n1.Log())
	}
	id := strings.TrimSpace(r.Stdout)
	if owner := attr(t, c, id, "Job_Owner"); !strings.HasPrefix(owner, "nobody@") {
		t.Fatalf("Job_Owner %q, want nobody@...", owner)
	}
	// nobody may not run jobs or delete root's, through the mom either.
	if r := c.RunEnvAs(n1.Env(), &nobody, "", "qrun", id); r.Code == 0 {
		t.Fatalf("nobody ran a job: %s", r)
	}
	rootJob := c.Submit("#!/bin/sh\n")
	if r := c.RunEnvAs(n1.Env(), &nobody, "", "qdel", rootJob); !strings.Contains(r.Stderr, "Unauthorized") {
		t.Fatalf("nobody deleted root's job through the mom: %s", r)
	}
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 20*time.Second)
	seq := strings.SplitN(id, ".", 2)[0]
	out := filepath.Join(outDir, "whoami.o"+seq)
	if got := readFile(t, out); got != "65534\n" {
		t.Fatalf("job ran as uid %q, want 65534", got)
	}
	st, _ := os.Stat(out)
	if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 65534 {
		t.Fatalf("output file owned by uid %d", sys.Uid)
	}
}

// A symlink planted at the output path is not followed.
func TestOutputSymlinkNotFollowed(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	target := filepath.Join(c.Home, "victim")
	os.WriteFile(target, []byte("precious\n"), 0o644)
	link := filepath.Join(c.Home, "planted.out")
	os.Symlink(target, link)
	id := c.Submit("#!/bin/sh\necho overwritten\n", "-o", link)
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 20*time.Second)
	if got := readFile(t, target); got != "precious\n" {
		t.Fatalf("symlink target was written: %q", got)
	}
	if got := attr(t, c, id, "Exit_status"); !strings.HasPrefix(got, "-") {
		t.Fatalf("job with a symlinked output path: Exit_status %q", got)
	}
}

// qsig delivers signals, and suspend/resume show S and back R.
func TestQsig(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	// The job says when its trap is set and when the trap ran.
	marks := t.TempDir()
	os.Chmod(marks, 0o777)
	trapped, got := filepath.Join(marks, "trapped"), filepath.Join(marks, "got")
	id := c.Submit(fmt.Sprintf("#!/bin/sh\ntrap 'echo got USR1; touch %s' USR1\ntouch %s\nwhile :; do sleep 1; done\n", got, trapped), "-N", "sig")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "R", 10*time.Second)
	fileAppears := func(path string) func() (bool, string) {
		return func() (bool, string) { _, err := os.Stat(path); return err == nil, fmt.Sprint(err) }
	}
	testcluster.WaitFor(t, "the job's trap set", 10*time.Second, fileAppears(trapped))
	c.MustRun("qsig", "-s", "suspend", id)
	if st := attr(t, c, id, "job_state"); st != "S" {
		t.Fatalf("after suspend: %q", st)
	}
	c.MustRun("qsig", "-s", "resume", id)
	if st := attr(t, c, id, "job_state"); st != "R" {
		t.Fatalf("after resume: %q", st)
	}
	c.MustRun("qsig", "-s", "SIGUSR1", id)
	if r := c.Run("qsig", "-s", "NOSUCH", id); r.Code == 0 {
		t.Fatalf("unknown signal accepted: %s", r)
	}
	testcluster.WaitFor(t, "the job's trap run", 10*time.Second, fileAppears(got))
	c.MustRun("qsig", "-s", "KILL", id)
	c.WaitJobState(id, "F", 20*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "265" {
		t.Errorf("killed job Exit_status %q, want 265", got)
	}
	seq := strings.SplitN(id, ".", 2)[0]
	if out := readFile(t, filepath.Join(c.Home, "sig.o"+seq)); !strings.Contains(out, "got USR1") {
		t.Errorf("job did not see SIGUSR1: %q", out)
	}
}

// A mom reports its host and its static resources; a manager's setting
// wins; offline nodes take no jobs.
func TestNodeReportsAndStates(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("big", testcluster.MomOptions{Config: "$ideal_load 30\n$max_load 40\ntape3480 4\n"})
	out := c.MustRun("qmgr", "-c", "list node big")
	for _, want := range []string{"resources_available.ncpus = ", "resources_available.mem = ", "resources_available.arch = linux", "resources_available.tape3480 = 4", "loadave = ", "max_load = 40", "ideal_load = 30"} {
		if !strings.Contains(out, want) {
			t.Errorf("node lacks %q:\n%s", want, out)
		}
	}
	c.MustRun("qmgr", "-c", "set node big resources_available.ncpus = 64")
	if out := c.MustRun("qmgr", "-c", "list node big"); !strings.Contains(out, "resources_available.ncpus = 64\n") {
		t.Errorf("manager's ncpus not shown:\n%s", out)
	}
	id := c.Submit("#!/bin/sh\n", "-l", "select=1:ncpus=48")
	c.MustRun("qmgr", "-c", "set node big state = offline")
	if r := c.Run("qrun", id); r.Code == 0 {
		t.Fatalf("job ran on an offline node")
	}
	c.MustRun("qmgr", "-c", "set node big state = free")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 20*time.Second)

	// A node whose load is above its mom's $max_load is busy.
	c.AddMomNoWait("hot", testcluster.MomOptions{Config: "$max_load 0\n"})
	testcluster.WaitFor(t, "node hot busy with a load over its max_load (free with none)", 15*time.Second, func() (bool, string) {
		out := c.MustRun("qmgr", "-c", "list node hot")
		load := regexp.MustCompile(`loadave = ([0-9.]+)`).FindStringSubmatch(out)
		st := c.NodeState("hot")
		return load != nil && load[1] != "0.00" && st == "busy" || load != nil && load[1] == "0.00" && st == "free", fmt.Sprintf("state %q\n%s", st, out)
	})
}

// pbsnodes shows what moms report and marks nodes offline and back.
func TestPbsnodes(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	out := c.MustRun("pbsnodes", "-a")
	for _, want := range []string{"n1\n", "n2\n", "     state = free\n", "     resources_available.ncpus = "} {
		if !strings.Contains(out, want) {
			t.Errorf("pbsnodes -a lacks %q:\n%s", want, out)
		}
	}
	c.MustRun("pbsnodes", "-o", "-N", "disk check", "n2")
	if got := c.MustRun("pbsnodes", "-l", "-n"); !regexp.MustCompile(`(?m)^n2\s+offline\s+disk check$`).MatchString(got) {
		t.Errorf("pbsnodes -l -n:\n%s", got)
	}
	c.MustRun("pbsnodes", "-c", "n2")
	c.WaitNodeState("n2", "free", 5*time.Second)
	js := c.MustRun("pbsnodes", "-a", "-F", "json")
	var doc struct {
		Nodes map[string]map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Nodes) != 2 {
		t.Fatalf("pbsnodes -F json: %v\n%s", err, js)
	}
	if r := c.Run("pbsnodes", "nosuch"); r.Code == 0 || !strings.Contains(r.Stderr, "nosuch") {
		t.Errorf("unknown node: %s", r)
	}
}

// A job submits another job from its compute node, as workflow engines
// do; the request goes through that node's mom and the child belongs to
// the same user.
func TestJobSubmitsFromComputeNode(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	parent := c.Submit("#!/bin/sh\necho '#!/bin/sh' | qsub -N child\n", "-N", "parent")
	c.MustRun("qrun", parent)
	c.WaitJobState(parent, "F", 20*time.Second)
	seq := strings.SplitN(parent, ".", 2)[0]
	out := strings.TrimSpace(readFile(t, filepath.Join(c.Home, "parent.o"+seq)))
	if !regexp.MustCompile(`^[0-9]+\.localhost$`).MatchString(out) {
		t.Fatalf("qsub inside the job printed %q (stderr %q)", out, readFile(t, filepath.Join(c.Home, "parent.e"+seq)))
	}
	if name := attr(t, c, out, "Job_Name"); name != "child" {
		t.Fatalf("child job name %q", name)
	}
	if owner, powner := attr(t, c, out, "Job_Owner"), attr(t, c, parent, "Job_Owner"); strings.SplitN(owner, "@", 2)[0] != strings.SplitN(powner, "@", 2)[0] {
		t.Fatalf("child owner %q, parent owner %q", owner, powner)
	}
}

// SIGHUP makes the mom read mom_priv/config again, as OpenPBS's and
// Torque's do (issue 30): it never dies of it, a running job goes on,
// the node shows the new values, and a broken file is refused with the
// old values kept.
func TestMomSIGHUPReloadsConfig(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	m := c.AddMom("n1", testcluster.MomOptions{Config: "$ideal_load 30\ntape3480 4\n"})
	id := c.Submit("#!/bin/sh\nsleep 300\n")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "R", 20*time.Second)
	pid := m.Pid()
	conf := filepath.Join(m.Home, "mom_priv", "config")
	old := readFile(t, conf)
	edit := strings.NewReplacer("$ideal_load 30\n", "$ideal_load 20\n", "tape3480 4\n", "tape3480 6\n").Replace(old)
	if err := os.WriteFile(conf, []byte(edit), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGHUP)
	testcluster.WaitFor(t, "the node's new values", 20*time.Second, func() (bool, string) {
		out := c.MustRun("qmgr", "-c", "list node n1")
		return strings.Contains(out, "resources_available.tape3480 = 6\n") && strings.Contains(out, "ideal_load = 20\n"), out
	})
	if err := os.WriteFile(conf, []byte(edit+"$ideal_load twenty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGHUP)
	testcluster.WaitFor(t, "the refusal in the mom's log", 20*time.Second, func() (bool, string) {
		log := m.Log()
		return strings.Contains(log, "mom_priv/config not reloaded"), log[max(0, len(log)-1500):]
	})
	if !strings.Contains(m.Log(), `changed=["$ideal_load", "$max_load", "resources"]`) {
		t.Errorf("the reload did not say what changed:\n%s", m.Log())
	}
	if syscall.Kill(pid, 0) != nil || c.NodeState("n1") == "down" {
		t.Fatalf("the mom did not survive SIGHUP: node %s\n%s", c.NodeState("n1"), m.Log())
	}
	if out := c.MustRun("qmgr", "-c", "list node n1"); !strings.Contains(out, "resources_available.tape3480 = 6\n") {
		t.Errorf("the values in force were not kept:\n%s", out)
	}
	if got, _ := c.JobAttr(id, "job_state"); got != "R" {
		t.Errorf("job state %q after the SIGHUPs, want R", got)
	}
	c.MustRun("qdel", id)
}
