package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

func count(states map[string]string, prefix, state string) int {
	n := 0
	for id, st := range states {
		if strings.HasPrefix(id, prefix) && st == state {
			n++
		}
	}
	return n
}

// waitFor waits until f returns true.
func waitFor(t *testing.T, what string, timeout time.Duration, f func() bool) {
	t.Helper()
	testcluster.WaitFor(t, what, timeout, func() (bool, string) { return f(), "false" })
}

// A job array on a real cluster: qsub -J prints the array's id; four
// subjobs of six run at once on a 4-cpu node, each with its index in
// PBS_ARRAY_INDEX and its own output file; qdel of a running subjob and
// of a waiting range while the array runs; a kill -9 of the server in the
// middle; the parent ends F with OpenPBS's exit status once its last
// subjob ends, and both personalities show it.
func TestJobArrays(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 4")
	c.StartScheduler("pbs_sched")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(dir, "go")
	script := "#!/bin/sh\necho \"index=$PBS_ARRAY_INDEX array=$PBS_ARRAY_ID job=$PBS_JOBID torque=$PBS_ARRAYID\"\n" +
		"while [ ! -f " + gate + " ]; do sleep 0.1; done\n"
	id := c.Submit(script, "-J", "1-6", "-N", "arr", "-j", "oe", "-o", dir+"/", "-l", "walltime=00:10:00")
	if !strings.HasSuffix(id, "[]."+c.ServerName()) {
		t.Fatalf("qsub -J printed %q, want <seq>[].<server>", id)
	}
	seq := strings.TrimSuffix(id, "[]."+c.ServerName())
	sub := func(i int) string { return fmt.Sprintf("%s[%d].%s", seq, i, c.ServerName()) }

	var st map[string]string
	waitFor(t, "four subjobs running", 30*time.Second, func() bool {
		st = tableRows(t, c.MustRun("qstat", "-t"))
		return count(st, seq+"[", "R") == 4
	})
	if st[id] != "B" || count(st, seq+"[", "Q") != 2 || len(st) != 7 {
		t.Fatalf("qstat -t while four run: %v", st)
	}
	if plain := tableRows(t, c.MustRun("qstat")); len(plain) != 1 || plain[id] != "B" {
		t.Fatalf("qstat without -t lists the array alone: %v", plain)
	}
	if got, _ := c.JobAttr(id, "array_state_count"); got != "Queued:2 Running:4 Exiting:0 Expired:0" {
		t.Errorf("array_state_count %q", got)
	}

	// qdel of the two waiting subjobs (a range) and of a running one.
	c.MustRun("qdel", seq+"[5-6]")
	c.MustRun("qdel", sub(1))
	c.WaitJobState(sub(1), "X", 20*time.Second)
	for _, i := range []int{5, 6} {
		if s, _ := c.JobAttr(sub(i), "job_state"); s != "X" {
			t.Errorf("%s after qdel: %s", sub(i), s)
		}
	}
	if ex, _ := c.JobAttr(sub(1), "Exit_status"); ex != "271" {
		t.Errorf("%s killed by qdel: Exit_status %s", sub(1), ex)
	}

	// The server dies while subjobs 2-4 run; they go on, and end after it
	// is back.
	c.KillServer(syscall.SIGKILL)
	c.StartServer()
	st = tableRows(t, c.MustRun("qstat", "-t"))
	if st[id] != "B" || st[sub(2)] != "R" || st[sub(5)] != "X" {
		t.Fatalf("qstat -t after the server's restart: %v", st)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.WaitJobState(id, "F", 60*time.Second)
	if ex, _ := c.JobAttr(id, "Exit_status"); ex != "1" {
		t.Errorf("array Exit_status %s, want 1 (a subjob was killed)", ex)
	}
	for i := 2; i <= 4; i++ {
		if ex, _ := c.JobAttr(sub(i), "Exit_status"); ex != "0" {
			t.Errorf("%s Exit_status %s", sub(i), ex)
		}
		out, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("arr.o%s.%d", seq, i)))
		want := fmt.Sprintf("index=%d array=%s job=%s torque=%d", i, id, sub(i), i)
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("output of %s: %q, %v; want %q", sub(i), out, err, want)
		}
	}
	hist := tableRows(t, c.MustRun("qstat", "-x", "-t", id))
	if hist[id] != "F" || count(hist, seq+"[", "X") != 6 {
		t.Errorf("qstat -x -t of the finished array: %v", hist)
	}
	torque := c.RunEnv(append(c.Env(), "PBS_PERSONALITY=torque"), "qstat", "-t", id)
	if tst := tableRows(t, torque.Stdout); tst[id] != "C" || tst[sub(3)] != "C" {
		t.Errorf("torque qstat -t: %v (%s)", tst, torque)
	}
	if r := c.Run("qstat", sub(2)); r.Code != 35 || !strings.Contains(r.Stderr, "Job has finished") {
		t.Errorf("qstat of a subjob of a finished array without -x: %s", r)
	}
}

// max_run_subjobs (-J x-y%N) keeps at most N subjobs running; qhold of
// the array stops its waiting subjobs, qrls lets them go; an array that
// depends on another waits for it.
func TestArrayLimitsAndHolds(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 8")
	c.StartScheduler("pbs_sched")
	first := c.Submit("#!/bin/sh\nsleep 1\n", "-J", "1-2")
	id := c.Submit("#!/bin/sh\nsleep 1\n", "-J", "1-6%2", "-W", "depend=afterok:"+first)
	if st, _ := c.JobAttr(id, "job_state"); st != "H" {
		t.Fatalf("an array that depends on another: %s", st)
	}
	// Shown as given, the array with its [] (qstat -f).
	if dep, _ := c.JobAttr(id, "depend"); dep != "afterok:"+first+"@"+c.ServerName() {
		t.Errorf("depend on an array shows %q, want afterok:%s@%s", dep, first, c.ServerName())
	}
	c.WaitJobState(first, "F", 30*time.Second)
	seq := strings.TrimSuffix(id, "[]."+c.ServerName())
	most := 0
	waitFor(t, "the limited array to finish", 60*time.Second, func() bool {
		st := tableRows(t, c.Run("qstat", "-x", "-t", id).Stdout)
		most = max(most, count(st, seq+"[", "R"))
		return st[id] == "F"
	})
	if most > 2 || most == 0 {
		t.Errorf("at most %d subjobs ran at once, want 2 (max_run_subjobs)", most)
	}

	held := c.Submit("#!/bin/sh\nexit 0\n", "-J", "0-3", "-h")
	if r := c.Run("qsig", "-s", "0", held); r.Code == 0 {
		t.Errorf("qsig of an array none of whose subjobs runs: %s", r)
	}
	if st, _ := c.JobAttr(held, "job_state"); st != "H" {
		t.Fatalf("qsub -h -J: %s", st)
	}
	c.MustRun("qrls", held)
	c.WaitJobState(held, "F", 30*time.Second)
	if ex, _ := c.JobAttr(held, "Exit_status"); ex != "0" {
		t.Errorf("released array Exit_status %s", ex)
	}

	// Subjobs that can never run: the array stays queued, saying why
	// (OpenPBS's Can Never Run), once for all its subjobs.
	never := c.Submit("#!/bin/sh\nexit 0\n", "-J", "1-500", "-l", "select=1:ncpus=99")
	waitAttr(t, c, never, "comment", func(v string) bool { return strings.HasPrefix(v, "Can Never Run: ") }, 30*time.Second)
	if sc, _ := c.JobAttr(never, "array_state_count"); sc != "Queued:500 Running:0 Exiting:0 Expired:0 " && sc != "Queued:500 Running:0 Exiting:0 Expired:0" {
		t.Errorf("array_state_count of the array that can never run: %q", sc)
	}
	c.MustRun("qdel", never)
}
