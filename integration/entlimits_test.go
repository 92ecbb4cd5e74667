package integration

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// OpenPBS's entity limits (issue 30), as sites since OpenPBS 13 write
// them: qmgr sets, lists, prints and unsets them; the server refuses a
// qsub over max_queued, max_queued_res or queued_jobs_threshold with
// OpenPBS's words (which workflow tools read); the scheduler holds a job
// back over max_run or max_run_res with OpenPBS's comment.
func TestEntityLimitsLive(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 4")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	for _, line := range []string{
		`set server max_run = "[u:PBS_GENERIC=1], [o:PBS_ALL=200]"`,
		`set server max_run_res.ncpus = "[g:PBS_GENERIC=50]"`,
		`set queue workq max_queued = "[u:PBS_GENERIC=3]"`,
		`set queue workq max_queued_res.ncpus = "[p:proj1=4]"`,
		`set server queued_jobs_threshold = "[u:PBS_GENERIC=10]"`,
		`set server max_run_soft = "[u:alice=20]"`,
	} {
		if r := c.Run("qmgr", "-c", line); r.Code != 0 {
			t.Fatalf("qmgr -c %q: %s", line, r)
		}
	}
	out := c.MustRun("qmgr", "-c", "list server")
	for _, want := range []string{"max_run = [u:PBS_GENERIC=1],[o:PBS_ALL=200]\n", "max_run_res.ncpus = [g:PBS_GENERIC=50]\n", "queued_jobs_threshold = [u:PBS_GENERIC=10]\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("list server lacks %q:\n%s", want, out)
		}
	}
	if out := c.MustRun("qmgr", "-c", "list queue workq"); !strings.Contains(out, "max_queued = [u:PBS_GENERIC=3]\n") || !strings.Contains(out, "max_queued_res.ncpus = [p:proj1=4]\n") {
		t.Errorf("list queue workq:\n%s", out)
	}
	if out := c.MustRun("qmgr", "-c", "print server"); !strings.Contains(out, "max_run = ") {
		t.Errorf("print server does not write max_run:\n%s", out)
	}
	// Old and new styles do not mix, as in OpenPBS.
	if r := c.Run("qmgr", "-c", "set queue workq max_user_run = 2"); r.Code == 0 || !strings.Contains(r.Stderr, "cannot be mixed") {
		t.Errorf("max_user_run beside max_run: %s", r)
	}
	for _, bad := range []string{`set server max_run = "[x:bob=1]"`, `set server max_run = "[o:bob=1]"`, `set server max_run_res.mem = "[u:bob=lots]"`, `set server max_queued = 5`} {
		if r := c.Run("qmgr", "-c", bad); r.Code == 0 {
			t.Errorf("qmgr -c %q was taken", bad)
		}
	}

	// max_queued: the fourth job of a user in workq is refused.
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1"))
	}
	r := c.RunStdin("#!/bin/sh\n", "qsub")
	if r.Code == 0 || strings.TrimSpace(r.Stderr) != "qsub: would exceed queue generic's per-user limit" {
		t.Errorf("a fourth job past max_queued [u:PBS_GENERIC=3]: %s", r)
	}
	// max_queued_res.ncpus for project proj1: 5 cpus is over 4.
	c.MustRun("qdel", ids[2])
	ids = ids[:2]
	r = c.RunStdin("#!/bin/sh\n", "qsub", "-P", "proj1", "-l", "select=1:ncpus=5")
	if r.Code == 0 || strings.TrimSpace(r.Stderr) != "qsub: would exceed project proj1's limit on resource ncpus in queue workq" {
		t.Errorf("a job past max_queued_res.ncpus [p:proj1=4]: %s", r)
	}

	// The jobs are counted as they come and go, and again from the store
	// after a restart: an array counts as its subjobs.
	c.KillServer(syscall.SIGTERM)
	c.StartServer()
	if r := c.RunStdin("#!/bin/sh\n", "qsub", "-J", "1-2"); r.Code == 0 || !strings.Contains(r.Stderr, "per-user limit") {
		t.Errorf("an array of 2 beside 2 jobs past max_queued 3, after a restart: %s", r)
	}
	third := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1")
	if r := c.RunStdin("#!/bin/sh\n", "qsub"); r.Code == 0 {
		t.Errorf("a fourth job past max_queued 3, after a restart: %s", r)
	}
	c.MustRun("qdel", third)

	// max_run [u:PBS_GENERIC=1]: one of the user's jobs runs, the next
	// waits with OpenPBS's comment.
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	waitAttr(t, c, ids[1], "comment", func(v string) bool { return v == "Not Running: User has reached server running job limit." }, 30*time.Second)
	if st := attr(t, c, ids[0], "job_state"); st != "R" {
		t.Errorf("the first job is %s, want R", st)
	}
	c.MustRun("qmgr", "-c", "unset server max_run")
	c.MustRun("qmgr", "-c", "set server scheduling = True") // a cycle now, as in OpenPBS
	c.WaitJobState(ids[1], "R", 30*time.Second)
	if out := c.MustRun("qmgr", "-c", "list server"); strings.Contains(out, "max_run = ") {
		t.Errorf("max_run still listed after unset:\n%s", out)
	}
	c.MustRun("qdel", ids...)
}
