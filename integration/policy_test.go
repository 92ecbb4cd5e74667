package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// policyCluster is one mom with ncpus cpus, scheduling off, and the
// given sched_priv files written before pbs_sched starts (files not given
// get the shipped defaults). Jobs run one at a time on ncpus 1.
func policyCluster(t *testing.T, ncpus int, files map[string]string) *testcluster.Cluster {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", fmt.Sprintf("set node n1 resources_available.ncpus = %d", ncpus))
	c.MustRun("qmgr", "-c", "set node n1 resources_available.mem = 16gb")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	priv := filepath.Join(c.Home, "sched_priv")
	os.MkdirAll(priv, 0o750)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(priv, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// startOrder waits for the jobs to finish and returns them in the order
// they started.
func startOrder(t *testing.T, c *testcluster.Cluster, ids ...string) []string {
	t.Helper()
	for _, id := range ids {
		c.WaitJobState(id, "F", 60*time.Second)
	}
	at := map[string]time.Time{}
	for _, id := range ids {
		at[id] = startTime(t, c, id)
	}
	out := append([]string(nil), ids...)
	sort.SliceStable(out, func(a, b int) bool { return at[out[a]].Before(at[out[b]]) })
	return out
}

func sameOrder(t *testing.T, what string, got, want []string, c *testcluster.Cluster) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s: jobs started in the order %v, want %v\n%s", what, got, want, c.SchedLog())
	}
}

// The sort order of sched_config decides which waiting job starts next,
// and an edit while jobs wait changes it without a restart.
func TestSortOrderAndLiveEdit(t *testing.T) {
	t.Parallel()
	c := policyCluster(t, 1, map[string]string{"sched_config": "sort_by: smallest_memory_first all\nbackfill: false all\n"})
	blocker := c.Submit("#!/bin/sh\nsleep 2\n")
	c.MustRun("qrun", blocker)
	job := func(mem string) string { return c.Submit("#!/bin/sh\nsleep 2\n", "-l", "select=1:ncpus=1:mem="+mem) }
	x3, x1, x2 := job("3gb"), job("1gb"), job("2gb")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	// Smallest memory first: x1 goes first, though submitted after x3.
	c.WaitJobState(x1, "R", 20*time.Second)
	// While x1 runs the admin switches to largest memory first.
	writeByRename(t, filepath.Join(c.Home, "sched_priv", "sched_config"), "sort_by: largest_memory_first all\nbackfill: false all\n")
	waitLog(t, c, `(?s)configuration loaded.*configuration loaded`, 10*time.Second)
	sameOrder(t, "smallest memory first, then largest after the edit", startOrder(t, c, x3, x1, x2), []string{x1, x3, x2}, c)
}

// strict_fifo with sort_by, the admin guide's own pairing (issue 30):
// the jobs start in the sort's order (shortest cput first), as OpenPBS's
// strict_ordering does, not in queue order.
func TestStrictFIFOKeepsTheSort(t *testing.T) {
	t.Parallel()
	c := policyCluster(t, 1, map[string]string{"sched_config": "strict_fifo: true all\nsort_by: shortest_job_first all\nbackfill: false all\n"})
	job := func(cput string) string {
		return c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1", "-l", "cput="+cput)
	}
	long, short, middle := job("30:00"), job("10:00"), job("20:00")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	sameOrder(t, "strict_fifo and shortest_job_first", startOrder(t, c, long, short, middle), []string{short, middle, long}, c)
}

// A holiday is non-prime time all day: the non-prime sort order applies.
func TestHolidayIsNonPrime(t *testing.T) {
	t.Parallel()
	now := time.Now()
	holidays := fmt.Sprintf("YEAR %d\nweekday all none\nsaturday all none\nsunday all none\n%d today, for this test\n", now.Year(), now.YearDay())
	config := "sort_by: smallest_memory_first prime\nsort_by: largest_memory_first non_prime\nbackfill: false all\n"
	c := policyCluster(t, 1, map[string]string{"sched_config": config, "holidays": holidays})
	blocker := c.Submit("#!/bin/sh\nsleep 2\n")
	c.MustRun("qrun", blocker)
	small := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1:mem=1gb")
	large := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1:mem=3gb")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	sameOrder(t, "on a holiday (non-prime): largest memory first", startOrder(t, c, small, large), []string{large, small}, c)
}

// In a dedicated-time window only the dedicated queue's jobs run; the
// others wait saying why.
func TestDedicatedWindow(t *testing.T) {
	t.Parallel()
	from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	window := from.Format("01/02/2006 15:04") + " " + to.Format("01/02/2006 15:04") + "\n"
	c := policyCluster(t, 2, map[string]string{"sched_config": "dedicated_prefix: ded\nbackfill: false all\n", "dedicated_time": window})
	for _, cmd := range []string{"create queue dedq queue_type = Execution", "set queue dedq enabled = True", "set queue dedq started = True"} {
		c.MustRun("qmgr", "-c", cmd)
	}
	ordinary := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1")
	// Inside the window a job must say it ends before the window does.
	dedicated := c.Submit("#!/bin/sh\nsleep 1\n", "-q", "dedq", "-l", "select=1:ncpus=1", "-l", "walltime=00:05:00")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	if !waitState(c, dedicated, "F", 20*time.Second) {
		t.Fatalf("dedicated job: %s\n%s", c.MustRun("qstat", "-f", dedicated), c.SchedLog())
	}
	waitAttr(t, c, ordinary, "comment", equals("Not Running: Dedicated time conflict"), 10*time.Second)
	if st := attr(t, c, ordinary, "job_state"); st != "Q" {
		t.Fatalf("the ordinary job is %s during dedicated time", st)
	}
}

// A job queued longer than max_starve drains the machine: a later small
// job that would fit waits, and the starving job starts first.
func TestStarvingJob(t *testing.T) {
	t.Parallel()
	c := policyCluster(t, 2, map[string]string{"sched_config": "help_starving_jobs: true all\nmax_starve: 0:00:02\nbackfill: false all\n"})
	blocker := c.Submit("#!/bin/sh\nsleep 4\n", "-l", "select=1:ncpus=1")
	c.MustRun("qrun", blocker)
	starving := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=2")
	// It starves once it has waited more than max_starve.
	qtime, err := time.ParseInLocation(time.ANSIC, attr(t, c, starving, "qtime"), time.Local)
	if err != nil {
		t.Fatal(err)
	}
	// Part of the workload: starving is a matter of the wall clock since
	// qtime, nothing to poll for.
	time.Sleep(time.Until(qtime.Add(3*time.Second + time.Millisecond)))
	small := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	waitAttr(t, c, small, "comment", equals("Not Running: Draining system to allow starving job to run"), 10*time.Second)
	sameOrder(t, "the starving job first", startOrder(t, c, small, starving), []string{starving, small}, c)
}

// waitState polls until a job is in state want.
func waitState(c *testcluster.Cluster, id, want string, timeout time.Duration) bool {
	ok, _ := testcluster.Poll(timeout, func() (bool, string) {
		v, _ := c.JobAttr(id, "job_state")
		return v == want, v
	})
	return ok
}
