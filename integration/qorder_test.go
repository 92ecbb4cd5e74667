package integration

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// qstatOrder is the job ids of the default qstat table, in its order.
func qstatOrder(t *testing.T, c *testcluster.Cluster) []string {
	t.Helper()
	var ids []string
	body := false
	for _, line := range strings.Split(c.MustRun("qstat"), "\n") {
		if strings.HasPrefix(line, "---") {
			body = true
			continue
		}
		if f := strings.Fields(line); body && len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// qorder (OpenPBS's) exchanges two jobs' places: qstat lists them
// swapped, jobs of different queues swap queues, the order survives a
// server restart, and the scheduler's fifo runs them in the new order.
// Running jobs and subjobs are refused with OpenPBS's messages.
func TestQorder(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", "create queue q2 queue_type = execution, enabled = true, started = true")
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	ran, gate := filepath.Join(dir, "ran"), filepath.Join(dir, "gate")
	job := func(name string, args ...string) string {
		script := "#!/bin/sh\necho " + name + " >> " + ran + "\nwhile [ ! -e " + gate + " ]; do sleep 0.2; done\n"
		return c.Submit(script, append([]string{"-N", name, "-l", "select=1:ncpus=1"}, args...)...)
	}
	a, b, x, y := job("a"), job("b"), job("x"), job("y", "-q", "q2")
	short := func(ids ...string) []string {
		var out []string
		for _, id := range ids {
			out = append(out, strings.TrimSuffix(id, ".localhost")+".localhost")
		}
		return out
	}
	if got := qstatOrder(t, c); !reflect.DeepEqual(got, short(a, b, x, y)) {
		t.Fatalf("qstat before qorder: %v", got)
	}
	c.MustRun("qorder", a, b)
	if got := qstatOrder(t, c); !reflect.DeepEqual(got, short(b, a, x, y)) {
		t.Errorf("qstat after qorder a b: %v, want b a x y", got)
	}
	c.MustRun("qorder", y, x)
	if got := qstatOrder(t, c); !reflect.DeepEqual(got, short(b, a, y, x)) {
		t.Errorf("qstat after qorder y x: %v, want b a y x", got)
	}
	if q, _ := c.JobAttr(x, "queue"); q != "q2" {
		t.Errorf("x after qorder with a job of q2: queue %q", q)
	}
	if q, _ := c.JobAttr(y, "queue"); q != "workq" {
		t.Errorf("y after qorder with a job of workq: queue %q", q)
	}
	if r := c.Run("qorder", a, "999"); r.Code == 0 || r.Stderr != "qorder: Unknown Job Id "+a+" or 999.localhost\n" {
		t.Errorf("qorder with an unknown job: %s", r)
	}
	if r := c.Run("qorder", a); r.Code != 2 || !strings.HasPrefix(r.Stderr, "usage: qorder job_identifier job_identifier\n") {
		t.Errorf("qorder with one operand: %s", r)
	}
	if r := c.Run("qorder", a, "7.elsewhere"); r.Code != 1 || r.Stderr != "qorder: both jobs ids must specify the same server\n" {
		t.Errorf("qorder across servers: %s", r)
	}
	// Another user owns neither job: refused, naming both.
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	if r := c.RunAs(nobody, "", "qorder", a, b); r.Code == 0 || r.Stderr != "qorder: Unauthorized Request "+a+" or "+b+"\n" {
		t.Errorf("nobody ordered root's jobs: %s", r)
	}
	arr := c.Submit("#!/bin/sh\n", "-J", "1-2")
	if r := c.Run("qorder", strings.Replace(arr, "[]", "[1]", 1), a); r.Code == 0 || !strings.Contains(r.Stderr, "Invalid request") {
		t.Errorf("qorder of a subjob: %s", r)
	}
	c.MustRun("qdel", arr)

	// The ranks are stored: a restart keeps the order.
	c.KillServer(syscall.SIGKILL)
	c.StartServer()
	if got := qstatOrder(t, c); !reflect.DeepEqual(got, short(b, a, y, x)) {
		t.Errorf("qstat after a restart: %v, want b a y x", got)
	}

	// One cpu: fifo starts the jobs one at a time, in the swapped order.
	c.MustRun("qdel", x) // q2's: by_queue would try its queue apart
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 1")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.StartScheduler("pbs_sched")
	c.WaitJobState(b, "R", 30*time.Second)
	if r := c.Run("qorder", b, a); r.Code == 0 || r.Stderr != "qorder: Request invalid for state of job "+b+" or "+a+"\n" {
		t.Errorf("qorder of a running job: %s", r)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a, b, y} {
		c.WaitJobState(id, "F", 60*time.Second)
	}
	got, err := os.ReadFile(ran)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "b\na\ny\n" {
		t.Errorf("run order %q, want b a y", got)
	}
}
