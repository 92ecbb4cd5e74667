package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/internal/fault"
	"gopbs/internal/testcluster"
)

// A job on two moms: the mother superior's sister joins it (its own
// TMPDIR there), pbsdsh runs a task on each node entry and pbs_tmrsh runs
// a command on the sister with the job's environment, its output, error
// and exit status coming back; a node outside the job is refused; at the
// end the sister's part is gone.
func TestSisterTasks(t *testing.T) {
	c, n1, n2 := twoMoms(t)
	script := `#!/bin/sh
pbsdsh -v sh -c 'echo "task $PBS_TASKNUM node $PBS_NODENUM tmp $TMPDIR"'
echo "pbsdsh=$?"
pbs_tmrsh n2 'echo "remote $PBS_JOBID $TMPDIR"; echo to-stderr >&2; exit 3'
echo "rc=$?"
echo typed | pbs_tmrsh n2 cat
pbs_tmrsh n9 true
echo "bad=$?"
`
	id := c.Submit(script, "-N", "tasks", "-j", "oe", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	out := readFile(t, filepath.Join(c.Home, "tasks.o"+strconv.Itoa(testcluster.Seq(id))))
	tmp1 := filepath.Join(n1.Home, "tmp", "pbs."+id)
	tmp2 := filepath.Join(n2.Home, "tmp", "pbs."+id)
	for _, want := range []string{
		"task 1 node 0 tmp " + tmp1 + "\n", "task 2 node 1 tmp " + tmp2 + "\n", "pbsdsh=0\n",
		"remote " + id + " " + tmp2 + "\n", "to-stderr\n", "rc=3\n", "typed\n",
		"n9 is not a node of job " + id, "bad=255\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("job output lacks %q:\n%s", want, out)
		}
	}
	if ok, why := testcluster.Poll(20*time.Second, func() (bool, string) {
		for _, p := range []string{filepath.Join(n2.Home, "mom_priv", "jobs", id), tmp2} {
			if _, err := os.Stat(p); err == nil {
				return false, p + " is still there"
			}
		}
		return true, ""
	}); !ok {
		t.Errorf("the sister's part of the job was not removed: %s\n%s", why, n2.Log())
	}
}

// pbs_tmrsh and pbsdsh refuse outside a job, with a cookie that is not
// the job's, and into another user's job.
func TestTaskRefusals(t *testing.T) {
	c, n1, _ := twoMoms(t)
	env := append(n1.Env(), "PBS_JOBID=", "PBS_JOBCOOKIE=")
	if r := c.RunEnv(env, "pbs_tmrsh", "n1", "true"); r.Code != 255 || !strings.Contains(r.Stderr, "not inside a PBS job") {
		t.Errorf("pbs_tmrsh outside a job: %s", r)
	}
	if r := c.RunEnv(env, "pbsdsh", "true"); r.Code != 1 || !strings.Contains(r.Stderr, "not inside a PBS job") {
		t.Errorf("pbsdsh outside a job: %s", r)
	}
	id := c.Submit("#!/bin/sh\necho \"cookie=$PBS_JOBCOOKIE\"\nsleep 60\n", "-N", "victim", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", id)
	out := filepath.Join(c.Home, "victim.o"+strconv.Itoa(testcluster.Seq(id)))
	var cookie string
	if ok, _ := testcluster.Poll(20*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(out)
		m := regexp.MustCompile(`cookie=([0-9a-f]+)`).FindSubmatch(b)
		if m == nil {
			return false, ""
		}
		cookie = string(m[1])
		return true, ""
	}); !ok {
		t.Fatalf("the job did not print its cookie")
	}
	forged := append(n1.Env(), "PBS_JOBID="+id, "PBS_JOBCOOKIE=0123")
	if r := c.RunEnv(forged, "pbs_tmrsh", "n2", "true"); r.Code != 255 || !strings.Contains(r.Stderr, "PBS_JOBCOOKIE does not match") {
		t.Errorf("pbs_tmrsh with a forged cookie: %s", r)
	}
	// Another user holding the job's own cookie still cannot start a task
	// in it (the job is root's).
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	r := c.RunEnvAs(append(n1.Env(), "PBS_JOBID="+id, "PBS_JOBCOOKIE="+cookie), &nobody, "", "pbs_tmrsh", "n2", "true")
	if r.Code != 255 || !strings.Contains(r.Stderr, "belongs to root") {
		t.Errorf("pbs_tmrsh into another user's job: %s", r)
	}
	c.MustRun("qdel", id)
	c.WaitJobState(id, "F", 30*time.Second)
}

// A task is killed at its job's end even when nothing waits for it
// (pbsdsh -o), on the sister and on the first node, and the cpu time of
// tasks on the sister counts in the job's resources_used.
func TestTasksEndWithJob(t *testing.T) {
	c, _, _ := twoMoms(t)
	script := `#!/bin/sh
pbsdsh -o -n 1 sleep 3001
pbsdsh -o -n 0 sleep 3002
pbs_tmrsh n2 'timeout 3 sh -c "while :; do :; done"'
echo "busy=$?"
`
	id := c.Submit(script, "-N", "ends", "-j", "oe", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	out := readFile(t, filepath.Join(c.Home, "ends.o"+strconv.Itoa(testcluster.Seq(id))))
	if !strings.Contains(out, "busy=124\n") {
		t.Errorf("job output: %q", out)
	}
	if ok, why := testcluster.Poll(20*time.Second, func() (bool, string) {
		for _, marker := range []string{"3001", "3002"} {
			if pids := processesWith(marker); len(pids) > 0 {
				return false, fmt.Sprintf("sleep %s still runs: %v", marker, pids)
			}
		}
		return true, ""
	}); !ok {
		t.Errorf("a task outlived its job: %s", why)
	}
	cput := attr(t, c, id, "resources_used.cput")
	secs, err := parseHMS(cput)
	if err != nil || secs < 2 {
		t.Errorf("resources_used.cput %q: want the sister's task's ~3 s counted", cput)
	}
}

// A sister that cannot join refuses; the start is undone, the job waits
// in its queue saying why, and runs once the sister joins.
func TestSisterJoinRefused(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{FaultBuild: true})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.AddMom("n1", testcluster.MomOptions{})
	c.SetFault("pbs_mom", fault.MomJoinJob+"=error")
	c.AddMom("n2", testcluster.MomOptions{})
	c.SetFault("pbs_mom", "")
	id := c.Submit("#!/bin/sh\npbsdsh -n 1 true\n", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	r := c.Run("qrun", id)
	if r.Code == 0 {
		t.Fatalf("qrun of a job whose sister refuses to join succeeded: %s", r)
	}
	if st, _ := c.JobAttr(id, "job_state"); st != "Q" {
		t.Errorf("job_state after the refused join %q, want Q", st)
	}
	if cm, _ := c.JobAttr(id, "comment"); !strings.Contains(cm, "sister node n2 cannot join") {
		t.Errorf("comment %q: want the sister named", cm)
	}
	// The fault fires once: the next start goes through.
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	if st := attr(t, c, id, "Exit_status"); st != "0" {
		t.Errorf("Exit_status %s", st)
	}
}

// parseHMS reads hh:mm:ss as seconds.
func parseHMS(s string) (int, error) {
	total := 0
	for _, part := range strings.Split(s, ":") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return 0, err
		}
		total = total*60 + n
	}
	return total, nil
}
