package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// schedCluster is a server, one mom with two cpus and pbs_sched.
func schedCluster(t *testing.T) (*testcluster.Cluster, *testcluster.Scheduler) {
	t.Helper()
	return schedClusterWith(t, testcluster.Options{})
}

// schedClusterWith is schedCluster with options for the server.
func schedClusterWith(t *testing.T, opts testcluster.Options) (*testcluster.Cluster, *testcluster.Scheduler) {
	t.Helper()
	c := testcluster.New(t, opts)
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	s := c.StartScheduler("pbs_sched")
	return c, s
}

// waitLog waits until the scheduler's log matches re.
func waitLog(t *testing.T, c *testcluster.Cluster, re string, timeout time.Duration) {
	t.Helper()
	rx := regexp.MustCompile(re)
	testcluster.WaitFor(t, fmt.Sprintf("scheduler log matching %q", re), timeout, func() (bool, string) {
		log := c.SchedLog()
		return rx.MatchString(log), "\n" + log
	})
}

// serverDebug is the options of a cluster whose server logs at debug
// level: the lines that show what it decided not to do.
var serverDebug = testcluster.Options{ServerArgs: []string{"-log-level", "debug"}}

// waitServerLogAfter waits until pbs_server's log matches re after the
// first line that contains mark.
func waitServerLogAfter(t *testing.T, c *testcluster.Cluster, mark, re string, timeout time.Duration) {
	t.Helper()
	rx := regexp.MustCompile(re)
	testcluster.WaitFor(t, fmt.Sprintf("server log matching %q after %q", re, mark), timeout, func() (bool, string) {
		log := c.ServerLog()
		i := strings.Index(log, mark)
		return i >= 0 && rx.MatchString(log[i:]), "\n" + log
	})
}

// qsub alone gets a job run and finished; each event kind starts a cycle
// that the scheduler logs with its name.
func TestSchedulerRunsJobsAndLogsEvents(t *testing.T) {
	t.Parallel()
	c, _ := schedCluster(t)
	waitLog(t, c, `cycle starts: event=scheduler_first`, 10*time.Second)
	id := c.Submit("#!/bin/sh\necho ran\n", "-N", "auto")
	c.WaitJobState(id, "F", 20*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "0" {
		t.Fatalf("Exit_status %q", got)
	}
	if got := attr(t, c, id, "comment"); !strings.HasPrefix(got, "Job started on ") {
		t.Errorf("comment %q", got)
	}
	waitLog(t, c, `cycle starts: event=new`, 5*time.Second)
	waitLog(t, c, `cycle starts: event=term`, 5*time.Second)
	// The cycle that started exactly one job asks for another one.
	waitLog(t, c, `cycle starts: event=recyc`, 5*time.Second)
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	waitLog(t, c, `cycle starts: event=cmd`, 5*time.Second)
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 1")
	waitLog(t, c, `cycle starts: event=time`, 5*time.Second)
}

// A queue with max_running = 1 never has two jobs running.
func TestQueueMaxRunning(t *testing.T) {
	t.Parallel()
	c, _ := schedCluster(t)
	c.MustRun("qmgr", "-c", "set queue workq max_running = 1")
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, c.Submit("#!/bin/sh\nsleep 1\n"))
	}
	testcluster.WaitFor(t, "every job finished", 40*time.Second, func() (bool, string) {
		out := c.MustRun("qselect", "-s", "R")
		if n := len(strings.Fields(out)); n > 1 {
			t.Fatalf("%d jobs running in a queue with max_running = 1", n)
		}
		done := 0
		for _, id := range ids {
			if st, _ := c.JobAttr(id, "job_state"); st == "F" {
				done++
			}
		}
		return done == len(ids), fmt.Sprintf("%d of %d finished", done, len(ids))
	})
	id := c.Submit("#!/bin/sh\nsleep 30\n")
	c.WaitJobState(id, "R", 10*time.Second)
	blocked := c.Submit("#!/bin/sh\n")
	waitAttr(t, c, blocked, "comment", equals("Not Running: Queue job limit has been reached."), 10*time.Second)
	if st := attr(t, c, blocked, "job_state"); st != "Q" {
		t.Errorf("the job held back by max_running is %s", st)
	}
}

// The server's max_user_res.ncpus = 1 holds the user's second one-cpu job
// back with OpenPBS's kind of comment though the node has a cpu free; it
// runs once the first ends.
func TestUserResourceLimit(t *testing.T) {
	t.Parallel()
	c, _ := schedCluster(t)
	c.MustRun("qmgr", "-c", "set server max_user_res.ncpus = 1")
	if got := c.MustRun("qmgr", "-c", "list server max_user_res"); !strings.Contains(got, "max_user_res.ncpus = 1") {
		t.Errorf("qmgr list: %s", got)
	}
	dir := t.TempDir()
	done := filepath.Join(dir, "first-may-end")
	first := c.Submit("#!/bin/sh\nwhile [ ! -e "+done+" ]; do sleep 0.2; done\n", "-l", "select=1:ncpus=1")
	c.WaitJobState(first, "R", 20*time.Second)
	second := c.Submit("#!/bin/sh\n", "-l", "select=1:ncpus=1")
	waitAttr(t, c, second, "comment", equals("Not Running: Would exceed user root's limit on resource ncpus in complex"), 20*time.Second)
	if st := attr(t, c, second, "job_state"); st != "Q" {
		t.Errorf("the job over max_user_res is %s", st)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.WaitJobState(second, "F", 30*time.Second)
}

// With scheduling = False nothing starts; setting it True starts jobs at
// once.
func TestSchedulingFalseAndTrue(t *testing.T) {
	t.Parallel()
	c, _ := schedClusterWith(t, serverDebug)
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	id := c.Submit("#!/bin/sh\n")
	// The server had the submission's event and started no cycle for it.
	waitServerLogAfter(t, c, "job queued: job="+id, `scheduling is False: events kept for later: events=\S*\bnew\b`, 10*time.Second)
	if st := attr(t, c, id, "job_state"); st != "Q" {
		t.Fatalf("job %s with scheduling off", st)
	}
	if out := c.MustRun("qstat", "-Bf"); !strings.Contains(out, "server_state = Idle") {
		t.Errorf("qstat -Bf with scheduling off:\n%s", out)
	}
	start := time.Now()
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.WaitJobState(id, "RF", 5*time.Second)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("job started %v after scheduling was set True", took)
	}
}

// A job too big for every node stays queued saying it can never run.
func TestTooBigJob(t *testing.T) {
	t.Parallel()
	c, _ := schedCluster(t)
	id := c.Submit("#!/bin/sh\n", "-l", "select=1:ncpus=999")
	// It stays queued, saying so, as OpenPBS's "Can Never Run".
	waitAttr(t, c, id, "comment", hasPrefix("Can Never Run: no node has ncpus=999"), 10*time.Second)
	// And a job that fits runs beside it.
	ok := c.Submit("#!/bin/sh\n")
	c.WaitJobState(ok, "F", 20*time.Second)
	if st := attr(t, c, id, "job_state"); st != "Q" {
		t.Errorf("the job that can never run is %s, want Q", st)
	}
}

// Killing pbs_sched leaves qsub and qstat working; a restarted pbs_sched
// picks up the queued work.
func TestSchedulerRestart(t *testing.T) {
	t.Parallel()
	c, s := schedClusterWith(t, serverDebug)
	s.Kill(syscall.SIGKILL)
	id := c.Submit("#!/bin/sh\n")
	if out := c.MustRun("qstat", id); !strings.Contains(out, id) {
		t.Fatalf("qstat without a scheduler:\n%s", out)
	}
	// The server tried to start a cycle for it.
	waitServerLogAfter(t, c, "job queued: job="+id, `scheduler not reachable`, 10*time.Second)
	if st := attr(t, c, id, "job_state"); st != "Q" {
		t.Fatalf("job %s without a scheduler", st)
	}
	c.StartScheduler("pbs_sched")
	c.WaitJobState(id, "F", 20*time.Second)
}

// Two schedulers cannot share a PBS_HOME.
func TestSchedulerLock(t *testing.T) {
	t.Parallel()
	c, _ := schedCluster(t)
	r := c.Run("pbs_sched")
	if r.Code == 0 || !strings.Contains(r.Stderr, "another scheduler") {
		t.Fatalf("second scheduler: %s", r)
	}
}

// The example site scheduler (shortest walltime first) replaces pbs_sched
// and starts jobs in its order.
func TestExampleSchedulerOrder(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 1")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	walls := map[string]string{}
	for _, w := range []string{"00:30:00", "00:10:00", "00:20:00"} {
		id := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "walltime="+w)
		walls[id] = w
	}
	c.StartScheduler("swf_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	for id := range walls {
		c.WaitJobState(id, "F", 30*time.Second)
	}
	// Start records are written in the order the jobs started.
	acct := c.Accounting()
	var order []string
	for _, line := range strings.Split(acct, "\n") {
		if f := strings.SplitN(line, ";", 4); len(f) == 4 && f[1] == "S" {
			if w, ok := walls[f[2]]; ok {
				order = append(order, w)
			}
		}
	}
	if strings.Join(order, " ") != "00:10:00 00:20:00 00:30:00" {
		t.Fatalf("start order by walltime: %v (accounting order of S records)", order)
	}
}

// examples/site_ranking, a site scheduler outside internal/ that reuses
// the FIFO pipeline and replaces its node ranking (best fit), places a
// 2-cpu job on the node it fills (n2, 2 cpus) where pbs_sched's order
// would take n1 (4 cpus), leaving n1 whole for a 4-cpu job that then
// starts beside it.
func TestExampleSiteRanking(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.AddMom("n2", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 4")
	c.MustRun("qmgr", "-c", "set node n2 resources_available.ncpus = 2")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	small := c.Submit("#!/bin/sh\nsleep 30\n", "-l", "select=1:ncpus=2", "-l", "walltime=00:10:00")
	big := c.Submit("#!/bin/sh\nsleep 30\n", "-l", "select=1:ncpus=4", "-l", "walltime=00:10:00")
	c.StartScheduler("site_ranking")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.WaitJobState(small, "R", 30*time.Second)
	c.WaitJobState(big, "R", 30*time.Second)
	if h := attr(t, c, small, "exec_host"); !strings.HasPrefix(h, "n2/") {
		t.Errorf("the 2-cpu job runs on %q, want n2 (best fit)", h)
	}
	if h := attr(t, c, big, "exec_host"); !strings.HasPrefix(h, "n1/") {
		t.Errorf("the 4-cpu job runs on %q, want n1", h)
	}
	c.MustRun("qdel", small, big)
}

// Editing sched_priv reloads it; a broken file is refused with its file
// and line, and the previous configuration stays.
func TestSchedConfigReload(t *testing.T) {
	t.Parallel()
	c, _ := schedCluster(t)
	path := c.Home + "/sched_priv/sched_config"
	loaded := func() int { return strings.Count(c.SchedLog(), "configuration loaded") }
	before := loaded()
	orig := readFile(t, path)
	// Editors replace the file by renaming a new one over it.
	writeByRename(t, path, orig+"\nstrict_fifo: maybe all\n")
	waitLog(t, c, `sched_priv rejected.*sched_config:\d+`, 10*time.Second)
	if loaded() != before {
		t.Fatalf("a broken sched_config was loaded")
	}
	writeByRename(t, path, orig+"\nstrict_fifo: true all\n")
	testcluster.WaitFor(t, "the fixed sched_config reloaded", 10*time.Second, func() (bool, string) {
		return loaded() > before, "\n" + c.SchedLog()
	})
	id := c.Submit("#!/bin/sh\n")
	c.WaitJobState(id, "F", 20*time.Second)
}

func writeByRename(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".swp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Live EASY backfilling (the shipped sched_config has backfill on): on a
// node of 2 cpus with a 1-cpu 90 s job running, a queued 2-cpu job
// reserves the node; a 1-cpu 20 s job starts in the gap; a 1-cpu 10 min
// job does not.
func TestLiveBackfill(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	running := c.Submit("#!/bin/sh\nsleep 90\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:01:30")
	c.MustRun("qrun", running)
	c.WaitJobState(running, "R", 10*time.Second)
	big := c.Submit("#!/bin/sh\n", "-l", "select=1:ncpus=2", "-l", "walltime=00:01:40")
	short := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:00:20")
	long := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:10:00")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.WaitJobState(short, "F", 20*time.Second)
	for _, id := range []string{big, long} {
		if st := attr(t, c, id, "job_state"); st != "Q" {
			t.Fatalf("job %s is %s; only the short job may use the gap", id, st)
		}
	}
	if got := attr(t, c, long, "comment"); !strings.Contains(got, "top job") {
		t.Errorf("comment of the long job %q", got)
	}
	// The reserved job shows where and when it is expected to start.
	if got := attr(t, c, big, "estimated.exec_vnode"); got != "(n1:ncpus=2)" {
		t.Errorf("estimated.exec_vnode %q", got)
	}
	if got := attr(t, c, big, "estimated.start_time"); got == "" {
		t.Errorf("no estimated.start_time:\n%s", c.MustRun("qstat", "-f", big))
	}
	// The time of day, or weekday and hour when the estimate is past midnight.
	if out := c.MustRun("qstat", "-T", big); !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(big) + `.* Q (\d\d:\d\d|[A-Z][a-z] \d\d)\s*$`).MatchString(out) {
		t.Errorf("qstat -T does not show the estimated start:\n%s", out)
	}
}
