package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// filterDir is a directory for filter scripts and their logs that the
// daemons (root) and every user can read.
func filterDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "filt")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// script writes an executable shell script.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// example is the path of a shipped filter in examples/filters.
func example(t *testing.T, name string) string {
	t.Helper()
	root, err := testcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "examples", "filters", name)
}

// waitAttr waits until ok accepts a job attribute, and returns it.
func waitAttr(t *testing.T, c *testcluster.Cluster, id, name string, ok func(string) bool, timeout time.Duration) string {
	t.Helper()
	var v string
	if done, _ := testcluster.Poll(timeout, func() (bool, string) {
		v = attr(t, c, id, name)
		return ok(v), v
	}); !done {
		t.Fatalf("job %s: %s = %q never as wanted\n%s", id, name, v, c.MustRun("qstat", "-fx", id))
	}
	return v
}

func hasPrefix(p string) func(string) bool {
	return func(v string) bool { return strings.HasPrefix(v, p) }
}
func contains(s string) func(string) bool {
	return func(v string) bool { return strings.Contains(v, s) }
}

// Submission filters on a real server with the shipped examples: a
// default walltime added, a job over the size refused with the filter's
// reason, the queue's filters before the server's, a missing program and
// a timeout refusing, qmgr showing the settings; and a filter sleeping 10 s
// holds up no other user's qsub or qstat.
func TestSubmissionFiltersLive(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	dir := filterDir(t)
	log := filepath.Join(dir, "calls")
	queueLog := script(t, dir, "queue_log", `echo "queue $2" >> `+log+"\nexit 0\n")
	serverLog := script(t, dir, "server_log", `echo "server $2" >> `+log+"\n"+`grep -q '"Job_Name":"slow"' "$1" && sleep 10`+"\nexit 0\n")
	c.MustRun("qmgr", "-c", "set queue workq submission_filters = "+queueLog)
	c.MustRun("qmgr", "-c", `set server submission_filters = "`+example(t, "add_walltime")+","+example(t, "max_cpus")+","+serverLog+`"`)
	if out := c.MustRun("qmgr", "-c", "print server"); !strings.Contains(out, "set server submission_filters = "+example(t, "add_walltime")+"\n") ||
		!strings.Contains(out, "set server submission_filters += "+example(t, "max_cpus")+"\n") ||
		!strings.Contains(out, "set queue workq submission_filters = "+queueLog) {
		t.Errorf("qmgr print server does not show the filters:\n%s", out)
	}

	id := c.Submit("#!/bin/sh\n")
	if got := attr(t, c, id, "Resource_List.walltime"); got != "01:00:00" {
		t.Errorf("walltime added by the filter: %q\n%s", got, c.MustRun("qstat", "-f", id))
	}
	kept := c.Submit("#!/bin/sh\n", "-l", "walltime=00:05:00")
	if got := attr(t, c, kept, "Resource_List.walltime"); got != "00:05:00" {
		t.Errorf("a given walltime was changed: %q", got)
	}
	if b, _ := os.ReadFile(log); string(b) != "queue \nserver \nqueue \nserver \n" {
		t.Errorf("calls: %q (the queue's filter runs first)", b)
	}

	// Every way of writing a request reaches the filter as one total:
	// the select's chunks, a bare chunk count, nodes= with and without ppn.
	refused := "Job rejected by submission filter " + example(t, "max_cpus") + ": exit 2: the job asks for "
	for _, tc := range []struct{ l, cpus string }{
		{"select=2:ncpus=40", "80"}, {"select=65", "65"}, {"nodes=65", "65"},
		{"nodes=1:ppn=65", "65"}, {"nodes=2:ppn=40", "80"}, {"ncpus=65", "65"},
	} {
		r := c.RunStdin("#!/bin/sh\n", "qsub", "-l", tc.l)
		if r.Code != 159 || !strings.Contains(r.Stderr, refused+tc.cpus+" cpus; at most 64 are allowed") {
			t.Errorf("-l %s: %s", tc.l, r)
		}
	}
	fits := c.Submit("#!/bin/sh\n", "-h", "-l", "nodes=2:ppn=32")
	// qalter of a job that has not started goes through the same filters,
	// judging the job as the alteration would leave it.
	r := c.Run("qalter", "-l", "select=3:ncpus=100", fits)
	if r.Code == 0 || !strings.Contains(r.Stderr, refused+"300 cpus; at most 64 are allowed") {
		t.Errorf("qalter past the limit: %s", r)
	}
	if got := attr(t, c, fits, "Resource_List.select"); got != "2:ncpus=32:mpiprocs=32" {
		t.Errorf("select %q after a refused qalter", got)
	}
	c.MustRun("qalter", "-l", "select=1:ncpus=64", fits)
	if got := attr(t, c, fits, "Resource_List.ncpus"); got != "64" {
		t.Errorf("ncpus %q after an accepted qalter", got)
	}
	c.MustRun("qdel", fits)
	os.Remove(log) // the slow filter's call is the next one logged

	// Another user's qsub and qstat answer while a filter sleeps.
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	var wg sync.WaitGroup
	wg.Add(1)
	var slow testcluster.Result
	go func() {
		defer wg.Done()
		slow = c.RunStdin("#!/bin/sh\n", "qsub", "-N", "slow")
	}()
	testcluster.WaitFor(t, "the slow filter running", 10*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "server"), string(b)
	})
	for i := 0; i < 3; i++ {
		start := time.Now()
		if r := c.RunAs(nobody, "#!/bin/sh\n", "qsub"); r.Code != 0 {
			t.Fatalf("qsub as nobody: %s", r)
		}
		if r := c.RunAs(nobody, "", "qstat"); r.Code != 0 {
			t.Fatalf("qstat as nobody: %s", r)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("nobody's qsub and qstat took %v while a filter slept", took)
		}
	}
	wg.Wait()
	if slow.Code != 0 {
		t.Errorf("the slow job: %s", slow)
	}

	c.MustRun("qmgr", "-c", "set server submission_filter_timeout = 1")
	if out := c.MustRun("qmgr", "-c", "print server"); !strings.Contains(out, "set server submission_filter_timeout = 1\n") {
		t.Errorf("qmgr print server:\n%s", out)
	}
	r = c.RunStdin("#!/bin/sh\n", "qsub", "-N", "slow")
	if r.Code == 0 || !strings.Contains(r.Stderr, "submission filter "+serverLog+": timed out after 1s") {
		t.Errorf("timed-out filter: %s", r)
	}
	c.MustRun("qmgr", "-c", "set server submission_filters = "+filepath.Join(dir, "gone"))
	r = c.RunStdin("#!/bin/sh\n", "qsub")
	if r.Code == 0 || !strings.Contains(r.Stderr, "submission filter "+filepath.Join(dir, "gone")+": not found") {
		t.Errorf("missing filter: %s", r)
	}
}

// Activation filters run by pbs_sched with the shipped license filter: the
// queue's filter first, then sched_config's in order; exit 4 fails a job
// and the filters before it revert (the license comes back); exit 1 blocks
// the jobs after it; exit 2 and a timeout keep the job queued with a
// comment; exit 3 holds until the hold_until a filter set, and the job
// runs once it passes; no free license holds for default_hold_duration.
func TestActivationFiltersLive(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 2")
	dir := filterDir(t)
	log := filepath.Join(dir, "calls")
	licFile := filepath.Join(dir, "licenses")
	os.WriteFile(licFile, []byte("5\n"), 0o644)
	queueLog := script(t, dir, "queue_log", `echo "queue $PBS_FILTER_JOB_ID $2" >> `+log+"\nexit 0\n")
	lic := script(t, dir, "lic", `echo "lic $PBS_FILTER_JOB_ID $2" >> `+log+"\nLICENSE_FILE="+licFile+" exec "+example(t, "licenses")+` "$@"`+"\n")
	// gate decides by the job's name.
	gate := script(t, dir, "gate", `echo "gate $PBS_FILTER_JOB_ID $2" >> `+log+`
[ "$2" = --revert ] && exit 0
name=$(sed -n 's/^            "Job_Name":"\([^"]*\)".*/\1/p' "$1")
case $name in
fail) echo "not for this job" >&2; exit 4;;
block) exit 1;;
keep) exit 2;;
slow) sleep 10;;
later)
	[ -e "$0.held" ] && exit 0
	touch "$0.held"
	qalter -W hold_until=$(( $(date +%s) + 4 )) "$PBS_FILTER_JOB_ID" || exit 9
	exit 3;;
esac
exit 0
`)
	c.MustRun("qmgr", "-c", "set queue workq activation_filters = "+queueLog)
	root, _ := testcluster.ModuleRoot()
	defaults, err := os.ReadFile(filepath.Join(root, "sched", "schedpriv", "defaults", "sched_config"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(c.Home, "sched_priv"), 0o750)
	config := string(defaults) + "\nactivation_filter: " + lic + "\nactivation_filter: " + gate + "\nfilter_timeout: 2\ndefault_hold_duration: 60\n"
	if err := os.WriteFile(filepath.Join(c.Home, "sched_priv", "sched_config"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	c.StartScheduler("pbs_sched")

	ok := c.Submit("#!/bin/sh\nsleep 60\n", "-N", "ok")
	fail := c.Submit("#!/bin/sh\n", "-N", "fail")
	block := c.Submit("#!/bin/sh\n", "-N", "block")
	after := c.Submit("#!/bin/sh\nsleep 1\n", "-N", "after")
	c.MustRun("qmgr", "-c", "set server scheduling = True")

	c.WaitJobState(ok, "R", 20*time.Second)
	waitAttr(t, c, fail, "job_state", func(v string) bool { return v == "F" }, 20*time.Second)
	if got := attr(t, c, fail, "comment"); got != "Not Running: job failed by activation filter "+gate+" (exit 4: not for this job)" {
		t.Errorf("comment of the failed job: %q", got)
	}
	waitAttr(t, c, block, "comment", hasPrefix("Not Running: activation filter "+gate+" (exit 1): no job of equal or lower priority starts after it"), 20*time.Second)
	waitAttr(t, c, after, "comment", hasPrefix("Not Running: an activation filter blocked jobs of equal or lower priority at job "+block), 20*time.Second)
	calls, _ := os.ReadFile(log)
	for _, want := range []string{
		"queue " + ok + " \nlic " + ok + " \ngate " + ok + " \n",
		"queue " + fail + " \nlic " + fail + " \ngate " + fail + " \nlic " + fail + " --revert\nqueue " + fail + " --revert\n",
	} {
		if !strings.Contains(string(calls), want) {
			t.Errorf("calls lack\n%s\nin\n%s", want, calls)
		}
	}
	if strings.Contains(string(calls), "gate "+after) {
		t.Errorf("a job after the blocking one was offered:\n%s", calls)
	}
	// The running job holds a license; the failed and blocked ones gave
	// theirs back.
	// The blocked job is offered again each cycle (a license taken, then
	// given back): between cycles the count is 4.
	testcluster.WaitFor(t, "4 licenses left", 10*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(licFile)
		return strings.TrimSpace(string(b)) == "4", fmt.Sprintf("licenses left: %q", b)
	})
	c.MustRun("qdel", block)
	c.WaitJobState(after, "F", 20*time.Second)

	keep := c.Submit("#!/bin/sh\n", "-N", "keep")
	waitAttr(t, c, keep, "comment", hasPrefix("Not Running: activation filter "+gate+" (exit 2): its resources are kept for it"), 20*time.Second)
	// The kept job holds the free cpu: the next one finds no room.
	slow := c.Submit("#!/bin/sh\n", "-N", "slow")
	waitAttr(t, c, slow, "comment", hasPrefix("Not Running: "+"Not enough"), 20*time.Second)
	c.MustRun("qdel", keep)
	waitAttr(t, c, slow, "comment", hasPrefix("Not Running: activation filter "+gate+" (timed out after 2s): its resources are kept"), 30*time.Second)
	c.MustRun("qdel", slow)

	// Exit 3 after the filter set hold_until: held until then, released
	// by the server, started on the next try, hold_until cleared.
	later := c.Submit("#!/bin/sh\n", "-N", "later")
	waitAttr(t, c, later, "job_state", func(v string) bool { return v == "H" }, 20*time.Second)
	// The filter's own qalter holds the job (with the server's comment)
	// before the scheduler's decision says which filter did it: wait for
	// that.
	waitAttr(t, c, later, "comment", func(v string) bool {
		return strings.HasPrefix(v, "Not Running: held until ") && strings.Contains(v, "by activation filter "+gate+" (exit 3)")
	}, 20*time.Second)
	if got := attr(t, c, later, "hold_until"); got == "" {
		t.Errorf("qstat -f shows no hold_until:\n%s", c.MustRun("qstat", "-f", later))
	}
	c.WaitJobState(later, "F", 30*time.Second)
	if got := attr(t, c, later, "hold_until"); got != "" {
		t.Errorf("hold_until %q after the job ran", got)
	}

	// No license: held by the license filter for default_hold_duration.
	os.WriteFile(licFile, []byte("0\n"), 0o644)
	before := time.Now().Unix()
	starved := c.Submit("#!/bin/sh\n", "-N", "starved")
	waitAttr(t, c, starved, "comment", contains("by activation filter "+lic+" (exit 3: no license free)"), 20*time.Second)
	shown := waitAttr(t, c, starved, "hold_until", func(v string) bool { return v != "" }, 5*time.Second)
	at, err := time.ParseInLocation("Mon Jan _2 15:04:05 2006", shown, time.Local)
	if until := at.Unix(); err != nil || until < before+60 || until > time.Now().Unix()+61 {
		t.Errorf("hold_until %q (%v), want about now + 60 s", shown, err)
	}
	if st := attr(t, c, starved, "job_state"); st != "H" {
		t.Errorf("job without a license is %s", st)
	}
}

// hold_until set with qalter by a manager holds a job until then and the
// scheduler starts it afterwards; an ordinary user may not set it.
func TestQalterHoldUntil(t *testing.T) {
	t.Parallel()
	c, _ := schedCluster(t)
	id := c.Submit("#!/bin/sh\n", "-h")
	until := time.Now().Unix() + 3
	c.MustRun("qalter", "-W", "hold_until="+strconv.FormatInt(until, 10), id)
	c.MustRun("qrls", id)
	if st, cm := attr(t, c, id, "job_state"), attr(t, c, id, "comment"); st != "H" || !strings.Contains(cm, "held until") {
		t.Fatalf("state %s comment %q", st, cm)
	}
	c.WaitJobState(id, "F", 20*time.Second)
	// PBS's datetime, as qsub -a takes it (issue 30).
	dated := c.Submit("#!/bin/sh\n", "-h")
	at := time.Now().Add(3 * time.Second).Truncate(time.Second)
	c.MustRun("qalter", "-W", "hold_until="+at.Format("200601021504.05"), dated)
	c.MustRun("qrls", dated)
	if st := attr(t, c, dated, "job_state"); st != "H" {
		t.Errorf("hold_until=%s: state %s", at.Format("200601021504.05"), st)
	}
	c.WaitJobState(dated, "F", 20*time.Second)
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	mine := strings.TrimSpace(c.RunAs(nobody, "#!/bin/sh\n", "qsub", "-h").Stdout)
	if r := c.RunAs(nobody, "", "qalter", "-W", "hold_until="+strconv.FormatInt(until+100, 10), mine); r.Code == 0 {
		t.Errorf("a user set hold_until: %s", r)
	}
}

// A start in a backfill window needs exit 0: a filter that says 2 to
// backfill starts leaves the short job queued with the filter named, while
// the top job keeps its reservation.
func TestActivationFilterRefusesBackfill(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	dir := filterDir(t)
	log := filepath.Join(dir, "calls")
	nobf := script(t, dir, "nobf", `echo "$PBS_FILTER_JOB_ID backfill=$PBS_FILTER_BACKFILL index=$PBS_FILTER_JOB_INDEX" >> `+log+`
[ "$PBS_FILTER_BACKFILL" = 1 ] && exit 2
exit 0
`)
	c.MustRun("qmgr", "-c", "set queue workq activation_filters = "+nobf)
	running := c.Submit("#!/bin/sh\nsleep 90\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:01:30")
	c.MustRun("qrun", running)
	c.WaitJobState(running, "R", 10*time.Second)
	big := c.Submit("#!/bin/sh\n", "-l", "select=1:ncpus=2", "-l", "walltime=00:01:40")
	short := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:00:20")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	waitAttr(t, c, short, "comment", hasPrefix("Not Running: activation filter "+nobf+" (exit 2) refused a backfill start"), 20*time.Second)
	if st := attr(t, c, short, "job_state"); st != "Q" {
		t.Errorf("the refused backfill job is %s", st)
	}
	if got := attr(t, c, big, "estimated.exec_vnode"); got != "(n1:ncpus=2)" {
		t.Errorf("the top job lost its reservation: estimated.exec_vnode %q", got)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), short+" backfill=1 index=2\n") {
		t.Errorf("calls:\n%s", b)
	}
}
