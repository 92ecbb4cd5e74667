package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// qterm -s -m stops the server, the scheduler and the mom; a running job
// keeps running and, once the daemons are back, finishes normally.
// Unprivileged users and qterm -t immediate are refused and stop nothing.
func TestQtermStopsDaemonsJobsSurvive(t *testing.T) {
	t.Parallel()
	c, s := schedCluster(t)
	out := filepath.Join(c.Home, "survivor.out")
	id := c.Submit("#!/bin/sh\nsleep 3\necho survived\n", "-o", out, "-j", "oe")
	c.WaitJobState(id, "R", 20*time.Second)

	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	if r := c.RunAs(nobody, "", "qterm"); r.Code == 0 || !strings.Contains(r.Stderr, "Unauthorized Request") {
		t.Fatalf("qterm as nobody: %s", r)
	}
	if r := c.Run("qterm", "-t", "immediate"); r.Code == 0 || !strings.Contains(r.Stderr, "not supported") {
		t.Fatalf("qterm -t immediate: %s", r)
	}
	if r := c.Run("qterm", "-t", "sometime"); r.Code != 2 || !strings.Contains(r.Stderr, "illegal -t value") {
		t.Fatalf("qterm -t sometime: %s", r)
	}
	if st := attr(t, c, id, "job_state"); st != "R" {
		t.Fatalf("after refused qterms the job is %s", st)
	}

	if r := c.Run("qterm", "-s", "-m"); r.Code != 0 {
		t.Fatalf("qterm -s -m: %s", r)
	}
	if code := c.WaitServerExit(15 * time.Second); code != 0 {
		t.Fatalf("pbs_server after qterm: exit %d\n%s", code, c.ServerLog())
	}
	if code := s.WaitExit(15 * time.Second); code != 0 {
		t.Fatalf("pbs_sched after qterm -s: exit %d\n%s", code, c.SchedStderr("pbs_sched"))
	}
	m := c.Mom("n1")
	if code := m.WaitExit(15 * time.Second); code != 0 {
		t.Fatalf("pbs_mom after qterm -m: exit %d\n%s", code, m.Log())
	}
	if !strings.Contains(c.SchedLog(), "QUIT from the server") {
		t.Errorf("scheduler log has no QUIT:\n%s", c.SchedLog())
	}

	// The job finishes while every daemon is down; its end is reported
	// once they are back.
	jobResult(t, m, id, 20*time.Second)
	c.StartServer()
	m.Start()
	c.StartScheduler("pbs_sched")
	c.WaitJobState(id, "F", 30*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "0" {
		t.Fatalf("Exit_status %q", got)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), "survived") {
		t.Fatalf("job output %q, %v", b, err)
	}
}
