package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// qmove moves a job that is not running to another queue, admitted as a
// submission would be (limits, enabled), and refuses what it cannot move.
func TestQmove(t *testing.T) {
	t.Parallel()
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

// A destination on another server gets OpenPBS's words: qselect -q
// queue@server cannot connect to that server (PBSE_BADHOST, as OpenPBS
// says of a host it cannot resolve) and qmove to a server whose host does
// not resolve is refused with PBSE_BADHOST's message, naming the job.
func TestDestinationOnUnknownServer(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	id := c.Submit("#!/bin/sh\n")
	r := c.Run("qselect", "-q", "workq@nosuch.invalid")
	if r.Code != proto.PBSE_BADHOST.ExitStatus() || r.Stderr != "qselect: cannot connect to server nosuch.invalid (errno=15008)\n" || r.Stdout != "" {
		t.Errorf("qselect -q workq@nosuch.invalid: %s", r)
	}
	if r := c.Run("qselect", "-q", "work q@localhost"); r.Code != 2 || r.Stderr != "qselect: illegally formed destination: work q@localhost\n" {
		t.Errorf("qselect of a malformed destination: %s", r)
	}
	if out := c.MustRun("qselect", "-q", "workq@localhost"); strings.TrimSpace(out) != id {
		t.Errorf("qselect -q workq@localhost: %q", out)
	}
	r = c.Run("qmove", "workq@nosuch.invalid", id)
	if r.Code != proto.PBSE_BADHOST.ExitStatus() || r.Stderr != "qmove: Access from host not allowed, or unknown host "+id+"\n" {
		t.Errorf("qmove to an unknown server: %s", r)
	}
}
