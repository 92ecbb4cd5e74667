package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// stfCluster is a server with one mom n1 of one cpu and pbs_sched,
// cycling every second.
func stfCluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{})
	for _, cmd := range []string{"set server node_check_rate = 3", "set server kill_delay = 2", "set server scheduler_iteration = 1"} {
		c.MustRun("qmgr", "-c", cmd)
	}
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 1")
	c.StartScheduler("pbs_sched")
	return c
}

// A shrink-to-fit job (OpenPBS's min_walltime and max_walltime) on a
// one-node cluster whose node a reservation takes in 20 minutes: it
// starts now, its walltime set to what is left before the reservation
// (qstat shows it), while a job of 10 hours waits; the scheduler logs
// the walltime it chose.
func TestShrinkToFitBeforeReservation(t *testing.T) {
	t.Parallel()
	c := stfCluster(t)
	gap := 20 * time.Minute
	start := time.Now().Add(gap).Truncate(time.Second)
	id, _ := rsub(t, c, "-R", rsubTime(start), "-D", "00:10:00", "-l", "select=1:ncpus=1")
	waitResvAttr(t, c, id, "reserve_state", "RESV_CONFIRMED", 15*time.Second)

	long := c.Submit("#!/bin/sh\nsleep 600\n", "-l", "select=1:ncpus=1", "-l", "walltime=10:00:00")
	stf := c.Submit("#!/bin/sh\nsleep 600\n", "-l", "select=1:ncpus=1", "-l", "min_walltime=00:10:00,max_walltime=10:00:00")
	c.WaitJobState(stf, "R", 20*time.Second)
	wall := attr(t, c, stf, "Resource_List.walltime")
	secs, err := resc.ParseDuration(wall)
	if err != nil {
		t.Fatalf("Resource_List.walltime of %s: %q (%v)", stf, wall, err)
	}
	// Chosen at the cycle that started it: what was left then before the
	// reservation, so no more than the gap and no less than what is left
	// now.
	left := time.Until(start)
	if d := time.Duration(secs) * time.Second; d > gap || d < left-5*time.Second {
		t.Errorf("walltime %s (%v), want just under the %v left before the reservation", wall, d, left)
	}
	for _, name := range []string{"Resource_List.min_walltime", "Resource_List.max_walltime"} {
		if v := attr(t, c, stf, name); v == "" {
			t.Errorf("%s of %s is gone", name, stf)
		}
	}
	testcluster.WaitFor(t, long+" commented", 15*time.Second, func() (bool, string) {
		cm := attr(t, c, long, "comment")
		return strings.HasPrefix(cm, "Not Running"), cm
	})
	if st := attr(t, c, long, "job_state"); st != "Q" {
		t.Errorf("the 10-hour job %s is %s, want Q: it would run into the reservation", long, st)
	}
	testcluster.WaitFor(t, "the scheduler's log of the walltime", 10*time.Second, func() (bool, string) {
		out := c.SchedLog()
		return strings.Contains(out, "Job will run for duration="+wall), ""
	})
	c.MustRun("qdel", stf, long)
}

// OpenPBS's refusals of shrink-to-fit requests: max_walltime without
// min_walltime, min_walltime above max_walltime, a job array, walltime
// with min_walltime, soft_walltime with min_walltime, a reservation; at
// qalter as at qsub; the queue's resources_max.walltime bounds
// max_walltime, and qmgr sets no limit on min_walltime or max_walltime.
func TestShrinkToFitRefusals(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	script := "#!/bin/sh\n"
	for _, tc := range []struct {
		args []string
		code proto.Code
		text string
	}{
		{[]string{"-l", "max_walltime=10:00:00"}, proto.PBSE_MAX_NO_MINWT, `Cannot have "max_walltime" without "min_walltime"`},
		{[]string{"-l", "min_walltime=10:00:00,max_walltime=00:10:00"}, proto.PBSE_MIN_GT_MAXWT, `"min_walltime" can not be greater than "max_walltime"`},
		{[]string{"-J", "1-3", "-l", "min_walltime=00:10:00"}, proto.PBSE_NOSTF_JOBARRAY, `"min_walltime" and "max_walltime" are not valid resources for a job array`},
		{[]string{"-l", "min_walltime=00:10:00,walltime=01:00:00"}, proto.PBSE_BADATVAL, "Illegal attribute or resource value"},
		{[]string{"-l", "min_walltime=00:10:00,soft_walltime=00:20:00"}, proto.PBSE_SOFTWT_STF, "soft_walltime is not supported with Shrink to Fit jobs"},
	} {
		r := c.RunStdin(script, "qsub", tc.args...)
		if r.Code != tc.code.ExitStatus() || !strings.Contains(r.Stderr, tc.text) {
			t.Errorf("qsub %v: %s; want exit %d saying %q", tc.args, r, tc.code.ExitStatus(), tc.text)
		}
	}
	if r := c.Run("pbs_rsub", "-R", rsubTime(time.Now().Add(time.Hour)), "-D", "00:10:00", "-l", "min_walltime=00:10:00"); r.Code != proto.PBSE_NOSTF_RESV.ExitStatus() ||
		!strings.Contains(r.Stderr, `"min_walltime" and "max_walltime" are not valid resources for a reservation`) {
		t.Errorf("pbs_rsub -l min_walltime: %s", r)
	}

	// qalter checks the job as it would leave it, and leaves it as it was.
	id := c.Submit(script, "-h", "-l", "min_walltime=00:10:00,max_walltime=01:00:00")
	if r := c.Run("qalter", "-l", "max_walltime=00:05:00", id); r.Code != proto.PBSE_MIN_GT_MAXWT.ExitStatus() || !strings.Contains(r.Stderr, `"min_walltime" can not be greater than "max_walltime"`) {
		t.Errorf("qalter -l max_walltime below min_walltime: %s", r)
	}
	if r := c.Run("qalter", "-l", "walltime=00:30:00", id); r.Code == 0 {
		t.Errorf("qalter -l walltime of a shrink-to-fit job: %s", r)
	}
	if got := attr(t, c, id, "Resource_List.max_walltime"); got != "01:00:00" {
		t.Errorf("max_walltime after refused alterations: %q", got)
	}
	if got, ok := c.JobAttr(id, "Resource_List.walltime"); ok {
		t.Errorf("a queued shrink-to-fit job has a walltime: %q", got)
	}
	plain := c.Submit(script, "-h", "-l", "walltime=00:30:00")
	if r := c.Run("qalter", "-l", "min_walltime=00:10:00", plain); r.Code == 0 {
		t.Errorf("qalter -l min_walltime of a job with a walltime: %s", r)
	}

	// resources_max.walltime bounds max_walltime (resources_max of
	// min_walltime or max_walltime is refused); resources_default.walltime
	// is not given to a shrink-to-fit job.
	for _, line := range []string{"set queue workq resources_max.min_walltime = 10:00:00", "set queue workq resources_min.max_walltime = 00:10:00", "set server resources_max.min_walltime = 00:10:00"} {
		if r := c.Run("qmgr", "-c", line); r.Code == 0 || !strings.Contains(r.Stderr, "Resource limits can not be set for the resource") {
			t.Errorf("qmgr -c %q: %s", line, r)
		}
	}
	c.MustRun("qmgr", "-c", "set queue workq resources_max.walltime = 10:00:00")
	c.MustRun("qmgr", "-c", "set queue workq resources_default.walltime = 00:30:00")
	if r := c.RunStdin(script, "qsub", "-l", "min_walltime=00:10:00,max_walltime=11:00:00"); r.Code != proto.PBSE_EXCQRESC.ExitStatus() || !strings.Contains(r.Stderr, "Job violates queue and/or server resource limits") {
		t.Errorf("max_walltime above resources_max.walltime: %s", r)
	}
	ok := c.Submit(script, "-h", "-l", "min_walltime=00:10:00,max_walltime=09:00:00")
	if got, has := c.JobAttr(ok, "Resource_List.walltime"); has {
		t.Errorf("a shrink-to-fit job got resources_default.walltime %q", got)
	}
	c.MustRun("qdel", id, plain, ok)
}
