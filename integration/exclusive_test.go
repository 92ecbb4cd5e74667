package integration

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// place=excl on a real cluster: an exclusive job takes its 4-cpu node
// whole (pbsnodes says job-exclusive) although it asks for one cpu; a
// one-cpu job waits until it ends; an exclusive job waits for a node
// nothing runs on; qrun onto a node held exclusively is refused.
func TestExclusivePlacement(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 4")
	c.StartScheduler("pbs_sched")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	gate := dir + "/go"
	wait := "#!/bin/sh\nwhile [ ! -f " + gate + " ]; do sleep 0.1; done\n"
	excl := c.Submit(wait, "-l", "select=1:ncpus=1", "-l", "place=excl", "-l", "walltime=00:10:00")
	c.WaitJobState(excl, "R", 30*time.Second)
	if st := c.NodeState("n1"); st != "job-exclusive" {
		t.Errorf("node of an exclusive job: state %q", st)
	}
	small := c.Submit("#!/bin/sh\nexit 0\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:01:00")
	if r := c.Run("qrun", "-H", "n1", small); r.Code == 0 || !strings.Contains(r.Stderr, "n1") {
		t.Errorf("qrun onto a node held exclusively: %s", r)
	}
	waitFor(t, "the scheduler's comment on the waiting job", 20*time.Second, func() bool {
		cm, _ := c.JobAttr(small, "comment")
		return strings.HasPrefix(cm, "Not Running")
	})
	if st, _ := c.JobAttr(small, "job_state"); st != "Q" {
		t.Fatalf("a one-cpu job beside an exclusive one on a 4-cpu node: %s", st)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.WaitJobState(small, "F", 30*time.Second)

	// The other way round: an exclusive job waits for the node to empty.
	gate2 := dir + "/go2"
	busy := c.Submit("#!/bin/sh\nwhile [ ! -f "+gate2+" ]; do sleep 0.1; done\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:10:00")
	c.WaitJobState(busy, "R", 30*time.Second)
	second := c.Submit("#!/bin/sh\nexit 0\n", "-l", "select=1:ncpus=1", "-l", "place=excl", "-l", "walltime=00:01:00")
	waitFor(t, "the scheduler's comment on the exclusive job", 20*time.Second, func() bool {
		cm, _ := c.JobAttr(second, "comment")
		return strings.HasPrefix(cm, "Not Running")
	})
	if st, _ := c.JobAttr(second, "job_state"); st != "Q" {
		t.Fatalf("an exclusive job on a node with a job: %s", st)
	}
	if err := os.WriteFile(gate2, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.WaitJobState(second, "F", 30*time.Second)
}
