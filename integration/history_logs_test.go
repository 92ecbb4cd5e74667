package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// History longer than the server keeps in memory (issue 34, item 4):
// with job_history_duration at 100 days, a finished job leaves memory
// and the store after 14 days, and qstat -x of its id still answers from
// its accounting record, until the 100 days are over.
func TestHistoryFromLogs(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{FaultBuild: true})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set server job_history_enable = True")
	c.MustRun("qmgr", "-c", "set server job_history_duration = 2400:00:00")
	id := c.Submit("#!/bin/sh\nexit 4\n", "-N", "old", "-l", "walltime=00:05:00")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	c.WaitAccounting(";E;" + id + ";")
	if f := c.MustRun("qstat", "-x", "-f", id); strings.Contains(f, "accounting record") {
		t.Fatalf("a job of today shown from the logs:\n%s", f)
	}

	// 20 days on: out of memory (the listing no longer has it), by id
	// from its record.
	c.AdvanceClock(20 * 24 * time.Hour)
	waitFor(t, "the job to leave memory", 20*time.Second, func() bool {
		return !strings.Contains(c.MustRun("qstat", "-x"), strings.SplitN(id, ".", 2)[0]+".")
	})
	f := c.MustRun("qstat", "-x", "-f", id)
	for _, want := range []string{"Job Id: " + id, "Job_Name = old", "job_state = F", "Exit_status = 4", "queue = workq",
		"Resource_List.walltime = 00:05:00", "resources_used.walltime = ", "shown from its accounting record of", "exec_host = n1/0"} {
		if !strings.Contains(f, want) {
			t.Errorf("qstat -x -f of a job 20 days old lacks %q:\n%s", want, f)
		}
	}
	if r := c.Run("qstat", "-f", id); r.Code == 0 {
		t.Errorf("qstat -f (no -x) of a job gone from memory answered: %s", r)
	}

	// 110 days on: past the history's duration, unknown.
	c.AdvanceClock(90 * 24 * time.Hour)
	waitFor(t, "a job 110 days old to be unknown", 20*time.Second, func() bool {
		r := c.Run("qstat", "-x", "-f", id)
		return r.Code != 0 && strings.Contains(r.Stderr, "Unknown Job Id")
	})
}
