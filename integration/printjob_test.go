package integration

import (
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// printjob prints a job's record through the server in OpenPBS's shape:
// the header (state as OpenPBS's number, substate), then its attributes
// (none with -a); an unknown job is "Job <id> not found", exit 1.
func TestPrintjob(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	id := c.Submit("#!/bin/sh\n", "-N", "pj", "-l", "walltime=00:10:00")
	out := c.MustRun("printjob", id)
	for _, want := range []string{
		"---------------------------------------------------\njobid:\t" + id + "\n---------------------------------------------------\n",
		"state:\t\t0x1\n", "substate:\t0xa (10)\n", "queue:\t\tworkq\n",
		"--attributes--\n", "Job_Name = pj\n", "Resource_List.walltime = 00:10:00\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("printjob %s lacks %q:\n%s", id, want, out)
		}
	}
	short := c.MustRun("printjob", "-a", strings.TrimSuffix(id, ".localhost"))
	if strings.Contains(short, "--attributes--") || !strings.Contains(short, "jobid:\t"+id+"\n") {
		t.Errorf("printjob -a:\n%s", short)
	}
	if r := c.Run("printjob", "999"); r.Code != 1 || r.Stderr != "Job 999.localhost not found\n" {
		t.Errorf("printjob of an unknown job: %s", r)
	}
	c.MustRun("qdel", id)
	if out := c.MustRun("printjob", id); !strings.Contains(out, "state:\t\t0x9\n") {
		t.Errorf("printjob of a finished job:\n%s", out)
	}
}
