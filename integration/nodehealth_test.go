package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// healthCheck writes a node check script in a new directory: it appends
// a line to runs at each run, and while the file flag exists prints
// "ERROR: /scratch is full" (and a line before it).
func healthCheck(t *testing.T) (script, flag, runs string) {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	script, flag, runs = filepath.Join(dir, "check"), filepath.Join(dir, "flag"), filepath.Join(dir, "runs")
	body := "#!/bin/sh\necho run >> " + runs + "\necho checking\nif [ -e " + flag + " ]; then echo 'ERROR: /scratch is full'; fi\nexit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return script, flag, runs
}

func runCount(runs string) int {
	b, _ := os.ReadFile(runs)
	return strings.Count(string(b), "run\n")
}

// markedNote is the comment pbsnodes -l -n shows for node ("" when it is
// not listed: not down or offline).
func markedNote(t *testing.T, c *testcluster.Cluster, node string) (listed bool, line string) {
	t.Helper()
	for _, l := range strings.Split(c.MustRun("pbsnodes", "-l", "-n"), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == node {
			return true, l
		}
	}
	return false, ""
}

// Torque's $node_check_script with $node_check_interval: a failing check
// (an ERROR line) takes the node offline with the line as its comment,
// shown by pbsnodes -l; the scheduler starts nothing there; the passing
// check brings it back, comment cleared, and the job runs. An offline of
// an operator stays through failing and passing checks.
func TestNodeHealthCheckPeriodic(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3") // reports, so checks, every second
	script, flag, runs := healthCheck(t)
	c.AddMom("n1", testcluster.MomOptions{Config: "$node_check_script " + script + "\n$node_check_interval 1\n"})
	c.StartScheduler("pbs_sched")

	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.WaitNodeState("n1", "offline", 20*time.Second)
	if listed, line := markedNote(t, c, "n1"); !listed || !strings.Contains(line, "offline") || !strings.HasSuffix(line, "ERROR: /scratch is full") {
		t.Fatalf("pbsnodes -l -n: %q", line)
	}
	id := c.Submit("#!/bin/sh\nexit 0\n")
	// The scheduler's comment says a cycle looked at the job.
	waitFor(t, "the scheduler to pass the job over", 30*time.Second, func() bool { return strings.HasPrefix(attr(t, c, id, "comment"), "Not Running") })
	if st := attr(t, c, id, "job_state"); st != "Q" {
		t.Fatalf("job on the only node, offline by its check: state %s", st)
	}

	os.Remove(flag)
	c.WaitJobState(id, "FX", 30*time.Second)
	if st := c.NodeState("n1"); st != "free" {
		t.Errorf("node after the check passes: %q", st)
	}
	if listed, line := markedNote(t, c, "n1"); listed {
		t.Errorf("pbsnodes -l -n still lists the node: %q", line)
	}
	if r := c.MustRun("pbsnodes", "n1"); strings.Contains(r, "comment") || strings.Contains(r, "offline_by_check") {
		t.Errorf("the check's comment outlived it:\n%s", r)
	}

	// An operator's offline is theirs: a failing check does not change
	// its comment, a passing one does not bring the node back.
	c.MustRun("pbsnodes", "-o", "-C", "new disks", "n1")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	n := runCount(runs)
	waitFor(t, "two more checks with the flag", 20*time.Second, func() bool { return runCount(runs) >= n+2 })
	os.Remove(flag)
	n = runCount(runs)
	waitFor(t, "two more passing checks", 20*time.Second, func() bool { return runCount(runs) >= n+2 })
	if listed, line := markedNote(t, c, "n1"); !listed || !strings.HasSuffix(line, "new disks") {
		t.Errorf("operator's offline after failing and passing checks: pbsnodes -l -n %q", line)
	}
	if st := c.NodeState("n1"); st != "offline" {
		t.Errorf("operator's offline after a passing check: %q", st)
	}
}

// $node_check_interval 0,jobstart,jobend: no periodic check; one before
// a start, and a failing one refuses the start (the job goes back to its
// queue) and takes the node offline; once failed it runs every interval
// until it passes; one after a job ends, and a failing one has the node
// offline before the job's end is known.
func TestNodeHealthCheckJobStartAndEnd(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	script, flag, runs := healthCheck(t)
	c.AddMom("n1", testcluster.MomOptions{Config: "$node_check_script " + script + "\n$node_check_interval 0,jobstart,jobend\n"})
	if n := runCount(runs); n != 0 {
		t.Fatalf("the check ran %d times with no periodic check and no job", n)
	}

	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	id := c.Submit("#!/bin/sh\nexit 0\n")
	r := c.Run("qrun", id)
	if r.Code == 0 || !strings.Contains(r.Stderr, "ERROR: /scratch is full") {
		t.Fatalf("qrun on a node whose check fails: %s", r)
	}
	if st := attr(t, c, id, "job_state"); st != "Q" {
		t.Errorf("job refused by the check: state %s", st)
	}
	if got := attr(t, c, id, "comment"); !strings.Contains(got, "failed its node check: ERROR: /scratch is full") {
		t.Errorf("job refused by the check: comment %q", got)
	}
	// The start is refused once the server has the node offline.
	if st := c.NodeState("n1"); st != "offline" {
		t.Errorf("node after a failed jobstart check: %q", st)
	}
	if listed, line := markedNote(t, c, "n1"); !listed || !strings.HasSuffix(line, "ERROR: /scratch is full") {
		t.Errorf("pbsnodes -l -n: %q", line)
	}

	os.Remove(flag)
	c.WaitNodeState("n1", "free", 20*time.Second)
	n := runCount(runs)
	// The job makes the flag: the jobend check fails.
	job := c.Submit("#!/bin/sh\ntouch " + flag + "\n")
	c.MustRun("qrun", job)
	c.WaitJobState(job, "FX", 30*time.Second)
	if st := c.NodeState("n1"); st != "offline" {
		t.Errorf("node once the job that failed the jobend check is known to have ended: %q", st)
	}
	if got := runCount(runs); got < n+2 {
		t.Errorf("the check ran %d times for the job's start and end, want 2", got-n)
	}
}
