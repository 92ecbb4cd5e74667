package integration

import (
	"strings"
	"testing"
	"time"

	"gopbs/internal/testcluster"
)

// qmove moves a job that is not running to another queue, admitted as a
// submission would be (limits, enabled), and refuses what it cannot move.
func TestQmove(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	for _, cmd := range []string{"create queue q2 queue_type = Execution", "set queue q2 enabled = True",
		"set queue q2 started = True", "set queue q2 max_queuable = 1", "set queue q2 resources_default.walltime = 00:10:00"} {
		c.MustRun("qmgr", "-c", cmd)
	}
	a := c.Submit("#!/bin/sh\n")
	b := c.Submit("#!/bin/sh\n")
	c.MustRun("qmove", "q2", a)
	if q := attr(t, c, a, "queue"); q != "q2" {
		t.Fatalf("queue after qmove: %q", q)
	}
	if w := attr(t, c, a, "Resource_List.walltime"); w != "00:10:00" {
		t.Errorf("the destination's resources_default did not apply: walltime %q", w)
	}
	// q2 holds one job at most; an unknown queue; a running job.
	if r := c.Run("qmove", "q2", b); r.Code == 0 || !strings.Contains(r.Stderr, "q2") {
		t.Errorf("qmove into a full queue: %s", r)
	}
	if r := c.Run("qmove", "nosuch", b); r.Code == 0 || !strings.Contains(r.Stderr, "nosuch") {
		t.Errorf("qmove to an unknown queue: %s", r)
	}
	c.MustRun("qrun", b)
	c.WaitJobState(b, "F", 20*time.Second)
	running := c.Submit("#!/bin/sh\nsleep 30\n")
	c.MustRun("qrun", running)
	c.WaitJobState(running, "R", 10*time.Second)
	if r := c.Run("qmove", "workq", running); r.Code == 0 {
		t.Errorf("qmove of a running job: %s", r)
	}
	c.MustRun("qdel", running)
	// The move is in the accounting log: a Q record naming the new queue.
	log := c.Accounting()
	if !strings.Contains(log, ";Q;"+a+";") || !strings.Contains(log, "queue=q2") {
		t.Errorf("no Q record for the move:\n%s", log)
	}
	// Another user may not move root's job.
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	if r := c.RunAs(nobody, "", "qmove", "workq", a); r.Code == 0 {
		t.Errorf("nobody moved root's job: %s", r)
	}
}
