package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// qrerun kills a running job and requeues it; it runs again and finishes;
// tracejob shows the whole story from the logs and accounting.
func TestQrerunAndTracejob(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	mom := c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	id := c.Submit("#!/bin/sh\nsleep 30\n")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "R", 10*time.Second)

	// Only operators and managers rerun; only running jobs are rerun.
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	if r := c.RunAs(nobody, "", "qrerun", id); r.Code == 0 {
		t.Fatalf("nobody reran a job: %s", r)
	}
	queued := c.Submit("#!/bin/sh\n")
	if r := c.Run("qrerun", queued); r.Code == 0 || !strings.Contains(r.Stderr, queued) {
		t.Fatalf("qrerun of a queued job: %s", r)
	}
	c.MustRun("qdel", queued)

	c.MustRun("qrerun", id)
	c.WaitJobState(id, "Q", 20*time.Second)
	if got := attr(t, c, id, "comment"); !strings.HasPrefix(got, "Job requeued: rerun by root@") {
		t.Errorf("comment after qrerun %q", got)
	}
	c.MustRun("qalter", "-l", "walltime=00:00:01", id) // the second run ends quickly
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 20*time.Second)
	if got := attr(t, c, id, "run_count"); got != "2" {
		t.Errorf("run_count %q, want 2", got)
	}
	// The server's side (this PBS_HOME), then the mom's (its host's).
	out := c.MustRun("tracejob", id)
	for _, want := range []string{"Job: " + id, "S    job queued", "S    job taken off its node: reason=\"Job requeued: rerun by root@", "A    R ", "A    E "} {
		if !strings.Contains(out, want) {
			t.Errorf("tracejob lacks %q:\n%s", want, out)
		}
	}
	out = c.MustRun("tracejob", "-p", mom.Home, id)
	i, j := strings.Index(out, "M    job started: run=1"), strings.Index(out, "M    job started: run=2")
	if i < 0 || j < i {
		t.Errorf("tracejob of the mom's logs:\n%s", out)
	}

	// A job that is not rerunnable needs force.
	nr := c.Submit("#!/bin/sh\nsleep 30\n", "-r", "n")
	c.MustRun("qrun", nr)
	c.WaitJobState(nr, "R", 10*time.Second)
	if r := c.Run("qrerun", nr); r.Code == 0 || !strings.Contains(r.Stderr, "not rerunnable") {
		t.Fatalf("qrerun of a job not rerunnable: %s", r)
	}
	c.MustRun("qrerun", "-W", "force", nr)
	c.WaitJobState(nr, "Q", 20*time.Second)
	c.MustRun("qdel", nr)
}
