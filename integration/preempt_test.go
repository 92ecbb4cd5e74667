package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// preemptCluster has n two-cpu nodes (n1...) whose moms read momConfig,
// an express queue (priority 200, above preempt_queue_prio's 150) beside
// workq, and pbs_sched with preemption on and the sched_config lines
// given.
func preemptCluster(t *testing.T, n int, schedConfig, momConfig string) *testcluster.Cluster {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.MustRun("qmgr", "-c", "set server kill_delay = 2")
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 2")
	c.MustRun("qmgr", "-c", "create queue express queue_type=execution")
	c.MustRun("qmgr", "-c", "set queue express Priority = 200, enabled = True, started = True")
	for i := 1; i <= n; i++ {
		name := "n" + strconv.Itoa(i)
		c.AddMom(name, testcluster.MomOptions{Config: momConfig})
		c.MustRun("qmgr", "-c", "set node "+name+" resources_available.ncpus = 2")
	}
	appendSchedConfig(t, c, "preemptive_sched: true all\npreempt_queue_prio: 150\npreempt_prio: \"express_queue, normal_jobs\"\npreempt_sort: min_time_since_start\n"+schedConfig)
	c.StartScheduler("pbs_sched")
	return c
}

// procState is the state letter of process pid (T: stopped), "" when it
// is gone.
func procState(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}

// A running job that writes its pid, then keeps a counter going.
func pidJob(dir, name string) string {
	pidFile := filepath.Join(dir, name+".pid")
	return "#!/bin/sh\necho $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nwhile :; do sleep 0.2; done\n"
}

func waitPid(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name+".pid")
	waitFor(t, name+"'s pid file", 20*time.Second, func() bool { _, err := os.Stat(path); return err == nil })
	return strings.TrimSpace(readFile(t, path))
}

// An express job preempts a normal one by suspension: the victim is
// frozen (its process stopped), shows S with a comment naming the
// express job, gives its cpus back (the express job runs on them, and
// the node counts only the express job's), and resumes once the express
// job ends; z and r accounting records say so.
func TestPreemptBySuspend(t *testing.T) {
	t.Parallel()
	c := preemptCluster(t, 1, "preempt_order: \"SCR\"\n", "")
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	victim := c.Submit(pidJob(dir, "victim"), "-l", "select=1:ncpus=2")
	c.WaitJobState(victim, "R", 30*time.Second)
	pid := waitPid(t, dir, "victim")
	done := filepath.Join(dir, "express-may-end")
	express := c.Submit("#!/bin/sh\nwhile [ ! -e "+done+" ]; do sleep 0.2; done\n", "-q", "express", "-l", "select=1:ncpus=2")
	c.WaitJobState(express, "R", 30*time.Second)
	if st := attr(t, c, victim, "job_state"); st != "S" {
		t.Fatalf("victim is %s while the express job runs on its cpus", st)
	}
	if sub := attr(t, c, victim, "substate"); sub != "45" {
		t.Errorf("victim's substate %s, want 45 (suspended by the scheduler)", sub)
	}
	if cm := attr(t, c, victim, "comment"); !strings.Contains(cm, "preempted by suspension") || !strings.Contains(cm, express) {
		t.Errorf("victim's comment %q does not say it was preempted for %s", cm, express)
	}
	waitFor(t, "the victim's process to be stopped", 10*time.Second, func() bool { return procState(pid) == "T" })
	if got := c.MustRun("pbsnodes", "-a"); !strings.Contains(got, "resources_assigned.ncpus = 2") {
		t.Errorf("n1 should count the express job's 2 cpus alone:\n%s", got)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.WaitJobState(express, "F", 30*time.Second)
	c.WaitJobState(victim, "R", 30*time.Second)
	waitFor(t, "the victim's process to run again", 10*time.Second, func() bool { s := procState(pid); return s != "T" && s != "" })
	// The resume's record is written once its commit is durable, which
	// may be just after qstat shows the job running again.
	var acct string
	testcluster.WaitFor(t, "the z and r records of "+victim, 10*time.Second, func() (bool, string) {
		acct = c.Accounting()
		return strings.Contains(acct, ";z;"+victim+";") && strings.Contains(acct, ";r;"+victim+";"), acct
	})
	if !strings.Contains(acct, "resources_released=(n1:ncpus=2)") {
		t.Errorf("the z record does not say what the victim released:\n%s", acct)
	}
	c.MustRun("qdel", victim)
	c.WaitJobState(victim, "F", 30*time.Second)
}

// With preempt_order R a rerunnable victim is requeued (an R record; the
// server's log says for which job, as its comment did until the
// scheduler's next one) and runs again once the express job is done.
func TestPreemptByRequeue(t *testing.T) {
	t.Parallel()
	c := preemptCluster(t, 1, "preempt_order: \"R\"\n", "")
	victim := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=2", "-r", "y")
	c.WaitJobState(victim, "R", 30*time.Second)
	express := c.Submit("#!/bin/sh\nsleep 3\n", "-q", "express", "-l", "select=1:ncpus=2")
	c.WaitJobState(express, "R", 30*time.Second)
	if log := c.DailyServerLog(); !strings.Contains(log, "job preempted: job="+victim+" method=R for="+express) {
		t.Errorf("the server's log does not say %s was requeued for %s:\n%s", victim, express, log)
	}
	c.WaitJobState(express, "F", 30*time.Second)
	c.WaitJobState(victim, "R", 30*time.Second)
	if rc := attr(t, c, victim, "run_count"); rc != "2" {
		t.Errorf("victim's run_count %s, want 2 (rerun after the requeue)", rc)
	}
	c.WaitAccounting(";R;" + victim + ";")
	c.MustRun("qdel", victim)
}

// A job is never preempted when no method of preempt_order applies (R
// for a job that is not rerunnable), nor by a job of equal rank (an
// express job running in the express queue): the new express job waits.
func TestPreemptNeverWithoutMethodOrRank(t *testing.T) {
	t.Parallel()
	c := preemptCluster(t, 2, "preempt_order: \"R\"\n", "")
	normal := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=2:host=n1", "-r", "n")
	first := c.Submit("#!/bin/sh\nsleep 300\n", "-q", "express", "-l", "select=1:ncpus=2:host=n2", "-r", "y")
	c.WaitJobState(normal, "R", 30*time.Second)
	c.WaitJobState(first, "R", 30*time.Second)
	second := c.Submit("#!/bin/sh\nsleep 1\n", "-q", "express", "-l", "select=1:ncpus=2")
	waitFor(t, "the second express job to be looked at", 30*time.Second, func() bool {
		return strings.HasPrefix(attr(t, c, second, "comment"), "Not Running")
	})
	c.WaitCycles(t, 2)
	for id, want := range map[string]string{normal: "R", first: "R", second: "Q"} {
		if st := attr(t, c, id, "job_state"); st != want {
			t.Errorf("%s is %s, want %s (comment %q)", id, st, want, attr(t, c, id, "comment"))
		}
	}
	if acct := c.Accounting(); strings.Contains(acct, ";R;") || strings.Contains(acct, ";z;") {
		t.Errorf("a job was preempted:\n%s", acct)
	}
	c.MustRun("qdel", normal, first, second)
}

// Run limits: at the server's max_running of 1 an express job preempts
// the normal one though its node has room (OpenPBS preempts to lift a
// limit); the victim stays suspended while its resuming would break the
// limit, and resumes once the express job ends.
func TestPreemptForRunLimit(t *testing.T) {
	t.Parallel()
	c := preemptCluster(t, 1, "preempt_order: \"S\"\n", "")
	c.MustRun("qmgr", "-c", "set server max_running = 1")
	victim := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1")
	c.WaitJobState(victim, "R", 30*time.Second)
	dir := t.TempDir()
	done := filepath.Join(dir, "express-may-end")
	express := c.Submit("#!/bin/sh\nwhile [ ! -e "+done+" ]; do sleep 0.2; done\n", "-q", "express", "-l", "select=1:ncpus=1")
	c.WaitJobState(express, "R", 30*time.Second)
	if st := attr(t, c, victim, "job_state"); st != "S" {
		t.Fatalf("the normal job is %s while the express job runs at max_running 1", st)
	}
	if cm := attr(t, c, victim, "comment"); !strings.Contains(cm, express) {
		t.Errorf("the victim's comment %q does not name %s", cm, express)
	}
	c.WaitCycles(t, 2)
	if st := attr(t, c, victim, "job_state"); st != "S" {
		t.Errorf("the victim is %s with the express job still running: resuming it breaks max_running", st)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.WaitJobState(express, "F", 30*time.Second)
	c.WaitJobState(victim, "R", 30*time.Second)
	c.MustRun("qdel", victim)
}

// Soft limits: with max_user_run_soft = 1 on workq its user's two jobs
// both run (a soft limit holds nothing back) and are both over it; a job
// of another queue, not over any limit, ranks above them
// (preempt_prio lists queue_softlimits below normal_jobs) and suspends
// one of them. A soft limit of 0 is refused, naming why.
func TestPreemptOverSoftLimit(t *testing.T) {
	t.Parallel()
	c := preemptCluster(t, 1, "preempt_order: \"S\"\npreempt_prio: \"express_queue, normal_jobs, queue_softlimits\"\n", "")
	if r := c.Run("qmgr", "-c", "set queue workq max_user_run_soft = 0"); r.Code == 0 || !strings.Contains(r.Stderr, "soft limit of 0") {
		t.Errorf("a soft limit of 0: %s, want it refused", r)
	}
	c.MustRun("qmgr", "-c", "set queue workq max_user_run_soft = 1")
	c.MustRun("qmgr", "-c", "create queue other queue_type=execution, Priority = 10, enabled = True, started = True")
	first := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1")
	c.WaitJobState(first, "R", 30*time.Second)
	second := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1")
	c.WaitJobState(second, "R", 30*time.Second)
	third := c.Submit("#!/bin/sh\nsleep 300\n", "-q", "other", "-l", "select=1:ncpus=1")
	c.WaitJobState(third, "R", 30*time.Second)
	// One victim frees the cpu needed (which one, when both started
	// within the same second, sched/fifo's tests decide).
	states := attr(t, c, first, "job_state") + attr(t, c, second, "job_state")
	if states != "RS" && states != "SR" {
		t.Fatalf("the jobs over the soft limit are %s, want one suspended for %s", states, third)
	}
	victim := first
	if states == "RS" {
		victim = second
	}
	if cm := attr(t, c, victim, "comment"); !strings.Contains(cm, third) {
		t.Errorf("the victim's comment %q does not name %s", cm, third)
	}
	c.MustRun("qdel", first, second, third)
}

// With a checkpoint action on the mom, preempt_order C checkpoints the
// victim (the action runs as the job's owner with the job's id and
// session), ends it and requeues it with a C record; on a mom without the
// action the same order falls through to R.
func TestPreemptByCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	script := filepath.Join(dir, "ckpt")
	marks := filepath.Join(dir, "marks")
	os.Mkdir(marks, 0o777)
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1 $2 $PBS_JOBID\" > "+marks+"/$1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := preemptCluster(t, 1, "preempt_order: \"CR\"\n", "$action checkpoint_abort 20 !"+script+" %jobid %sid\n")
	victim := c.Submit(pidJob(marks, "victim"), "-l", "select=1:ncpus=2", "-r", "y")
	c.WaitJobState(victim, "R", 30*time.Second)
	waitPid(t, marks, "victim") // its script runs: there is something to checkpoint
	express := c.Submit("#!/bin/sh\nsleep 2\n", "-q", "express", "-l", "select=1:ncpus=2")
	waitFor(t, "the checkpoint action to run", 30*time.Second, func() bool { _, err := os.Stat(filepath.Join(marks, victim)); return err == nil })
	if got := strings.Fields(readFile(t, filepath.Join(marks, victim))); len(got) != 3 || got[0] != victim || got[2] != victim || got[1] == "0" {
		t.Errorf("the action's arguments and environment: %q", got)
	}
	c.WaitJobState(express, "F", 30*time.Second)
	c.WaitJobState(victim, "R", 30*time.Second)
	c.WaitAccounting(";C;" + victim + ";")
	// Requeued, its comment is soon the scheduler's; the server's log
	// keeps why.
	if log := c.DailyServerLog(); !strings.Contains(log, "job preempted: job="+victim+" method=C for="+express) {
		t.Errorf("the server's log does not say %s was checkpointed for %s:\n%s", victim, express, log)
	}
	c.MustRun("qdel", victim)
}

// Time suspended is not walltime, as in OpenPBS: a job suspended past its
// walltime limit is not killed for it, ends on its own once resumed, and
// its resources_used.walltime leaves the suspension out.
func TestSuspendedTimeIsNotWalltime(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.AddMom("n1", testcluster.MomOptions{})
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	// The job ends by itself after three seconds of running.
	id := c.Submit("#!/bin/sh\necho $$ > "+filepath.Join(dir, "short.pid")+"\ni=0\nwhile [ $i -lt 15 ]; do sleep 0.2; i=$((i+1)); done\n", "-l", "walltime=00:00:04")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "R", 20*time.Second)
	pid := waitPid(t, dir, "short")
	c.MustRun("qsig", "-s", "suspend", id)
	testcluster.WaitFor(t, "the job's process to be stopped", 20*time.Second, func() (bool, string) {
		st := procState(pid)
		return st == "T", fmt.Sprintf("process %s in state %q, job %s\n%s", pid, st, attr(t, c, id, "job_state"), c.Mom("n1").Log())
	})
	// Suspended well past the 4 s limit: the shepherd must not kill it.
	suspendedAt := time.Now()
	waitFor(t, "six seconds of suspension", 20*time.Second, func() bool {
		return time.Since(suspendedAt) > 6*time.Second && attr(t, c, id, "job_state") == "S"
	})
	c.MustRun("qsig", "-s", "resume", id)
	c.WaitJobState(id, "F", 30*time.Second)
	if st, cm := attr(t, c, id, "Exit_status"), attr(t, c, id, "comment"); st != "0" {
		t.Fatalf("Exit_status %s (comment %q): killed for time it spent suspended", st, cm)
	}
	if w := attr(t, c, id, "resources_used.walltime"); w >= "00:00:06" {
		t.Errorf("resources_used.walltime %s counts the suspension", w)
	}
}
