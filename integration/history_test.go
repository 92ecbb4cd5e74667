package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// A deleted queued job becomes history: hidden from plain qstat in the
// pbspro dialect, shown as F with -x and as C in the torque dialect, with
// an exit status either way, and recorded in the accounting log.
func TestDeletedJobHistoryAndPersonalities(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	id := c.Submit("#!/bin/sh\n", "-N", "gone")
	c.MustRun("qdel", id)

	if out := c.MustRun("qstat"); strings.Contains(out, id) {
		t.Fatalf("plain qstat shows a finished job:\n%s", out)
	}
	r := c.Run("qstat", id)
	if r.Code != 35 || !strings.Contains(r.Stderr, "Job has finished") {
		t.Fatalf("qstat of a finished job without -x: %s", r)
	}
	if out := c.MustRun("qstat", "-x"); !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + `\s+gone\s+\S+\s+\S+\s+F\s+workq`).MatchString(out) {
		t.Fatalf("qstat -x does not show the job as F:\n%s", out)
	}
	if v, ok := c.JobAttr(id, "Exit_status"); !ok || v != "271" {
		t.Fatalf("Exit_status = %q (present %v)", v, ok)
	}
	r = c.Run("qdel", id)
	if r.Code != 35 || !strings.Contains(r.Stderr, "Job has finished") {
		t.Fatalf("qdel of a finished job: %s", r)
	}

	torque := append(c.Env(), "PBS_PERSONALITY=torque")
	out := runEnv(t, c, torque, "qstat")
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + `\s+gone\s+\S+\s+\S+\s+C\s+workq`).MatchString(out) {
		t.Fatalf("torque qstat does not show the job as C:\n%s", out)
	}
	if full := runEnv(t, c, torque, "qstat", "-f", id); !strings.Contains(full, "exit_status = 271") {
		t.Fatalf("torque qstat -f lacks exit_status:\n%s", full)
	}

	c.WaitAccounting(";Q;"+id+";", ";D;"+id+";requestor=")
	if !strings.Contains(c.DailyServerLog(), id) {
		t.Errorf("server_logs do not mention %s", id)
	}
	// History survives a restart.
	c.KillServer(syscall.SIGKILL)
	c.StartServer()
	if v, _ := c.JobAttr(id, "job_state"); v != "F" {
		t.Fatalf("after restart the finished job is %q", v)
	}
}

// A damaged store stops the server with a message naming the file; it is
// never replaced by a fresh one.
func TestDamagedStoreRefusesToStart(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.Submit("#!/bin/sh\n")
	c.KillServer(syscall.SIGTERM)
	path := filepath.Join(c.Home, "server_priv", "serverdb")
	if err := os.WriteFile(path, []byte(strings.Repeat("garbage", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := c.StartServerExpectFailure(20 * time.Second)
	if err == nil {
		t.Fatalf("pbs_server started on a damaged store:\n%s", out)
	}
	if !strings.Contains(out, path) {
		t.Fatalf("refusal does not name %s:\n%s", path, out)
	}
	got, _ := os.ReadFile(path)
	if string(got) != strings.Repeat("garbage", 4096) {
		t.Fatal("the damaged store was modified")
	}
}

// Holds and waits as a user sees them through the commands.
func TestHoldsAndExecutionTime(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	held := c.Submit("#!/bin/sh\n", "-h")
	if v, _ := c.JobAttr(held, "job_state"); v != "H" {
		t.Fatalf("qsub -h: state %q", v)
	}
	c.MustRun("qrls", held)
	if v, _ := c.JobAttr(held, "job_state"); v != "Q" {
		t.Fatalf("after qrls: state %q", v)
	}
	soon := time.Now().Add(2 * time.Second).Format("0601021504.05")
	waiting := c.Submit("#!/bin/sh\n", "-a", soon)
	if v, _ := c.JobAttr(waiting, "job_state"); v != "W" {
		t.Fatalf("qsub -a in the future: state %q", v)
	}
	c.WaitJobState(waiting, "Q", 10*time.Second) // its Execution_Time passed
	c.MustRun("qalter", "-N", "renamed", "-l", "walltime=2:00:00", waiting)
	if v, _ := c.JobAttr(waiting, "Job_Name"); v != "renamed" {
		t.Fatalf("qalter -N: name %q", v)
	}
	if v, _ := c.JobAttr(waiting, "Resource_List.walltime"); v != "02:00:00" {
		t.Fatalf("qalter -l walltime: %q", v)
	}
	ids := strings.Fields(c.MustRun("qselect", "-s", "Q"))
	if len(ids) != 2 {
		t.Fatalf("qselect -s Q: %v", ids)
	}
}

func runEnv(t *testing.T, c *testcluster.Cluster, env []string, name string, args ...string) string {
	t.Helper()
	r := c.RunEnv(env, name, args...)
	if r.Code != 0 {
		t.Fatalf("%s %v: %s", name, args, r)
	}
	return r.Stdout
}
