package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/resc"
)

// OpenPBS's eligible time (eligible_time_enable, issue 30): a job
// accrues eligible_time only while its accrue_type is eligible (2): not
// while a user hold holds it or its project's max_run holds it back
// (ineligible, 1; the scheduler tells the server), nor while it runs
// (3). qstat -f shows both while the server keeps them; a manager may
// set eligible_time; turned off, neither is shown nor may be set.
func TestEligibleTime(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	c.MustRun("qmgr", "-c", "set server eligible_time_enable = True")
	c.MustRun("qmgr", "-c", `set server max_run = "[p:proj1=1]"`)
	c.StartScheduler("pbs_sched")

	seconds := func(id string) int64 {
		t.Helper()
		v, ok := c.JobAttr(id, "eligible_time")
		if !ok {
			t.Fatalf("job %s shows no eligible_time:\n%s", id, c.MustRun("qstat", "-f", id))
		}
		n, err := resc.ParseDuration(v)
		if err != nil {
			t.Fatalf("job %s: eligible_time = %q: %v", id, v, err)
		}
		return n
	}
	accrue := func(id, want string, timeout time.Duration) {
		t.Helper()
		waitAttr(t, c, id, "accrue_type", func(v string) bool { return v == want }, timeout)
	}

	// A runs (accrue_type 3); B, held by its owner, is ineligible; C,
	// of A's project, is held back by max_run: the scheduler makes it
	// ineligible.
	a := c.Submit("#!/bin/sh\nsleep 300\n", "-P", "proj1", "-l", "select=1:ncpus=1")
	c.WaitJobState(a, "R", 30*time.Second)
	accrue(a, "3", 10*time.Second)
	b := c.Submit("#!/bin/sh\nsleep 300\n", "-h", "-l", "select=1:ncpus=2")
	cj := c.Submit("#!/bin/sh\nsleep 300\n", "-P", "proj1", "-l", "select=1:ncpus=1")
	accrue(b, "1", 10*time.Second)
	waitAttr(t, c, cj, "comment", hasPrefix("Not Running: "), 30*time.Second)
	accrue(cj, "1", 30*time.Second)
	cAt := seconds(cj) // what C accrued before the cycle judged it

	// Time passes (a wait on the clock, asserting nothing while it
	// lasts): neither B nor C accrues any of it.
	held := time.Now()
	testcluster.WaitFor(t, "3 seconds of wall time", 10*time.Second, func() (bool, string) {
		return time.Since(held) >= 3*time.Second, ""
	})
	if got := seconds(b); got != 0 {
		t.Errorf("held job %s accrued %ds of eligible time", b, got)
	}
	if got := seconds(cj); got != cAt {
		t.Errorf("job %s held back by max_run accrued eligible time: %ds, then %ds", cj, cAt, got)
	}

	// Released, B waits for cpus (no limit holds it): it is eligible and
	// accrues, from its release on only.
	c.MustRun("qrls", b)
	released := time.Now()
	accrue(b, "2", 30*time.Second)
	testcluster.WaitFor(t, "B accrues eligible time", 20*time.Second, func() (bool, string) {
		v, _ := c.JobAttr(b, "eligible_time")
		n, _ := resc.ParseDuration(v)
		return n >= 2, v
	})
	if got, most := seconds(b), int64(time.Since(released).Seconds())+1; got > most {
		t.Errorf("released job %s: eligible_time %ds, more than the %ds since its release", b, got, most)
	}
	if st := attr(t, c, b, "job_state"); st != "Q" {
		t.Errorf("job %s is %s, want Q (waiting for cpus)", b, st)
	}

	// A manager sets B's eligible_time; it accrues on from there.
	c.MustRun("qalter", "-W", "eligible_time=00:03:00", b)
	if got := seconds(b); got < 180 || got > 190 {
		t.Errorf("after qalter -W eligible_time=00:03:00: %ds", got)
	}
	// Held again (so that C, not B, takes A's cpu), it stops accruing.
	c.MustRun("qhold", b)
	accrue(b, "1", 10*time.Second)
	bAt := seconds(b)

	// A leaves: C starts (run time), its eligible time as it was.
	c.MustRun("qdel", a)
	c.WaitJobState(cj, "R", 30*time.Second)
	accrue(cj, "3", 10*time.Second)
	if got := seconds(cj); got != cAt {
		t.Errorf("job %s started with eligible_time %ds, want the %ds it had", cj, got, cAt)
	}
	// Its end record says how long it was eligible (OpenPBS's E record).
	c.MustRun("qdel", cj)
	testcluster.WaitFor(t, "C's E record", 30*time.Second, func() (bool, string) {
		for _, line := range strings.Split(c.Accounting(), "\n") {
			if strings.Contains(line, ";E;"+cj+";") {
				return strings.Contains(line, " eligible_time="+resc.FormatDuration(cAt)), line
			}
		}
		return false, "no E record"
	})

	// Turned off: the attributes are not shown, and eligible_time may
	// not be set (OpenPBS's PBSE_ETEERROR).
	c.MustRun("qmgr", "-c", "set server eligible_time_enable = False")
	full := c.MustRun("qstat", "-f", b)
	if strings.Contains(full, "eligible_time = ") || strings.Contains(full, "accrue_type = ") {
		t.Errorf("eligible_time_enable False, yet qstat -f shows them:\n%s", full)
	}
	if r := c.Run("qalter", "-W", "eligible_time=00:01:00", b); r.Code == 0 || !strings.Contains(r.Stderr, "Cannot set attribute when eligible_time_enable is OFF") {
		t.Errorf("qalter -W eligible_time with eligible_time_enable off: %s", r)
	}
	// On again: B shows what it had; held, it accrued none of the time.
	c.MustRun("qmgr", "-c", "set server eligible_time_enable = True")
	accrue(b, "1", 10*time.Second)
	if got := seconds(b); got != bAt {
		t.Errorf("eligible_time on again: %ds, want the %ds B had when held", got, bAt)
	}
	c.MustRun("qdel", b)
}

// An array accrues eligible time while subjobs wait to run, and none
// once its last one has started (OpenPBS's test_job_array).
func TestEligibleTimeArray(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 1")
	c.MustRun("qmgr", "-c", "set server eligible_time_enable = True")
	c.StartScheduler("pbs_sched")
	arr := c.Submit("#!/bin/sh\nsleep 300\n", "-J", "1-2", "-l", "select=1:ncpus=1")
	first, second := strings.Replace(arr, "[]", "[1]", 1), strings.Replace(arr, "[]", "[2]", 1)
	c.WaitJobState(first, "R", 30*time.Second)
	waitAttr(t, c, arr, "accrue_type", func(v string) bool { return v == "2" }, 10*time.Second)
	c.MustRun("qdel", first)
	c.WaitJobState(second, "R", 30*time.Second)
	waitAttr(t, c, arr, "accrue_type", func(v string) bool { return v == "1" }, 10*time.Second)
	c.MustRun("qdel", arr)
}
