package integration

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// A workflow tool's chain (Snakemake: qsub -W depend=afterok:A:B) on a
// real cluster, with the server killed and restarted while the first job
// runs: the dependants stay held across the restart, start when their
// parents end well, and are deleted with a comment when they never can.
func TestDependChainAcrossServerRestart(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.StartScheduler("pbs_sched")
	gate := filepath.Join(t.TempDir(), "go")
	if err := os.Chmod(filepath.Dir(gate), 0o777); err != nil {
		t.Fatal(err)
	}
	a := c.Submit("#!/bin/sh\nwhile [ ! -f " + gate + " ]; do sleep 0.1; done\n")
	c.WaitJobState(a, "R", 20*time.Second)
	b := c.Submit("#!/bin/sh\nexit 0\n", "-W", "depend=afterok:"+a)
	chain := c.Submit("#!/bin/sh\nexit 0\n", "-W", "depend=afterok:"+a+":"+b)
	onFail := c.Submit("#!/bin/sh\nexit 0\n", "-W", "depend=afternotok:"+a)
	for _, id := range []string{b, chain, onFail} {
		if st, _ := c.JobAttr(id, "job_state"); st != "H" {
			t.Fatalf("%s is %s before its parent ended, want H", id, st)
		}
	}
	want := "afterok:" + a + "@" + c.ServerName() + ":" + b + "@" + c.ServerName()
	if d, _ := c.JobAttr(chain, "depend"); d != want {
		t.Fatalf("qstat -f depend = %q, want %q", d, want)
	}
	if h, _ := c.JobAttr(chain, "Hold_Types"); h != "s" {
		t.Fatalf("Hold_Types = %q, want s", h)
	}

	c.KillServer(syscall.SIGKILL)
	c.StartServer()
	for _, id := range []string{b, chain, onFail} {
		if st, _ := c.JobAttr(id, "job_state"); st != "H" {
			t.Fatalf("%s is %s after the restart, want H", id, st)
		}
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.WaitJobState(a, "F", 30*time.Second)
	for _, id := range []string{b, chain} {
		c.WaitJobState(id, "F", 30*time.Second)
		if ex, _ := c.JobAttr(id, "Exit_status"); ex != "0" {
			t.Errorf("%s Exit_status %s", id, ex)
		}
	}
	if st, _ := c.JobAttr(onFail, "job_state"); st != "F" {
		t.Fatalf("afternotok on a job that ended well: %s", st)
	}
	if cm, _ := c.JobAttr(onFail, "comment"); !strings.Contains(cm, "can never be met") {
		t.Errorf("comment %q", cm)
	}
}

// A parent that fails: afterok dependants are deleted, afternotok ones run;
// a dependency on an unknown job is refused by qsub; qalter -W depend
// holds a queued job.
func TestDependOnFailedParent(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.StartScheduler("pbs_sched")
	bad := c.Submit("#!/bin/sh\nexit 3\n")
	c.WaitJobState(bad, "F", 30*time.Second)
	ok := c.Submit("#!/bin/sh\nexit 0\n", "-W", "depend=afterok:"+bad)
	rescue := c.Submit("#!/bin/sh\nexit 0\n", "-W", "depend=afternotok:"+bad)
	c.WaitJobState(ok, "F", 10*time.Second)
	if cm, _ := c.JobAttr(ok, "comment"); !strings.Contains(cm, "can never be met") {
		t.Errorf("afterok on a failed job: comment %q", cm)
	}
	c.WaitJobState(rescue, "F", 30*time.Second)
	if ex, _ := c.JobAttr(rescue, "Exit_status"); ex != "0" {
		t.Errorf("afternotok on a failed job: Exit_status %s", ex)
	}
	if r := c.RunStdin("#!/bin/sh\n", "qsub", "-W", "depend=afterok:99999"); r.Code == 0 || !strings.Contains(r.Stderr, "Unknown Job Id") {
		t.Errorf("unknown parent: %s", r)
	}
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	p := c.Submit("#!/bin/sh\n")
	q := c.Submit("#!/bin/sh\n")
	c.MustRun("qalter", "-W", "depend=afterany:"+p, q)
	if st, _ := c.JobAttr(q, "job_state"); st != "H" {
		t.Fatalf("qalter -W depend: %s", st)
	}
	c.MustRun("qdel", p)
	c.WaitJobState(q, "Q", 10*time.Second)
}
