package integration

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// A scheduler's decision carries the exact placement; the server verifies
// it against live state and refuses a stale one with a reason, starting
// nothing (issue 8).
func TestStalePlacementRefused(t *testing.T) {
	t.Parallel()
	c, n1, _ := twoMoms(t)
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", "set node n2 resources_available.ncpus = 1")
	cl, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(c.Home, "pbs_server.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	run := func(id, where string) proto.ObjectError {
		t.Helper()
		res, err := cl.RunJobs([]proto.RunSpec{{JobID: id, Nodes: where}})
		if err != nil || len(res) != 1 {
			t.Fatalf("RunJobs %s on %s: %v %v", id, where, res, err)
		}
		return res[0]
	}
	refused := func(id, where, reason string) {
		t.Helper()
		r := run(id, where)
		if r.Code == proto.PBSE_NONE || !strings.Contains(r.Text, reason) {
			t.Fatalf("%s on %s: %d %q, want a refusal saying %q", id, where, r.Code, r.Text, reason)
		}
		if st := attr(t, c, id, "job_state"); st == "R" {
			t.Fatalf("%s started although its placement was refused", id)
		}
	}
	sleeper := "#!/bin/sh\nsleep 60\n"
	// Resources taken: n2's one cpu goes to a first job.
	first := c.Submit(sleeper)
	if r := run(first, "(n2:ncpus=1)"); r.Code != proto.PBSE_NONE {
		t.Fatalf("exact placement refused: %s", r.Text)
	}
	c.WaitJobState(first, "R", 10*time.Second)
	second := c.Submit(sleeper)
	refused(second, "(n2:ncpus=1)", "n2 does not have ncpus=1 free")
	// A placement that is not the job's request.
	refused(second, "(n1:ncpus=2)", "does not match the job's chunk")
	refused(second, "(n1:ncpus=1)+(n2:ncpus=1)", "more chunks")
	// A scheduler's structured placement (a node per chunk) is checked the
	// same way against live state.
	for _, tc := range []struct {
		where  []string
		reason string
	}{{[]string{"n2"}, "n2 does not have ncpus=1 free"}, {[]string{"n1", "n2"}, "names 2 nodes for the 1 chunks"}} {
		res, err := cl.RunJobs([]proto.RunSpec{{JobID: second, Where: tc.where}})
		if err != nil || len(res) != 1 || res[0].Code == proto.PBSE_NONE || !strings.Contains(res[0].Text, tc.reason) {
			t.Fatalf("%s on %v: %v %v, want a refusal saying %q", second, tc.where, res, err, tc.reason)
		}
	}
	// A node that went down.
	n1.Kill(syscall.SIGKILL)
	c.WaitNodeState("n1", "down", 15*time.Second)
	refused(second, "(n1:ncpus=1)", "n1 is not available")
	// A job no longer queued.
	c.MustRun("qdel", first)
	c.WaitJobState(first, "F", 15*time.Second)
	refused(first, "(n2:ncpus=1)", "finished")
	c.MustRun("qhold", second)
	if r := run(second, "(n2:ncpus=1)"); r.Code != proto.PBSE_NONE {
		// A held job may be started by a privileged request (qrun does):
		// the server only enforces, the scheduler decides.
		t.Fatalf("held job on a free node: %s", r.Text)
	}
}
