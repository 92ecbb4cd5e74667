package integration

import (
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// qmgrSchedAttrs is what "qmgr -c 'list sched ...'" shows, by attribute,
// after checking the header names the default scheduler.
func qmgrSchedAttrs(t *testing.T, c *testcluster.Cluster, cmd string) map[string]string {
	t.Helper()
	out := c.MustRun("qmgr", "-c", cmd)
	if !strings.HasPrefix(out, "Sched default\n") {
		t.Fatalf("%s:\n%s", cmd, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n")[1:] {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok {
			got[k] = v
		}
	}
	return got
}

// qmgrRefused runs a qmgr command that the server must refuse with a
// message containing want.
func qmgrRefused(t *testing.T, c *testcluster.Cluster, cmd, want string) {
	t.Helper()
	r := c.Run("qmgr", "-c", cmd)
	if r.Code != 2 || !strings.Contains(r.Stderr, want) {
		t.Errorf("qmgr -c %q: %s; want exit 2 and %q", cmd, r, want)
	}
}

// The qmgr sched object as OpenPBS's PTL tests and admins' setup scripts
// use it: list sched [default], its settings shared with the server (one
// stored value, set through either), the read-only ones refused with
// OpenPBS's words, OpenPBS's answers for another scheduler, and print
// sched replayed.
func TestQmgrSchedObject(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	got := qmgrSchedAttrs(t, c, "list sched default")
	for k, want := range map[string]string{
		"sched_port":          strconv.Itoa(c.SchedPort),
		"sched_priv":          filepath.Join(c.Home, "sched_priv"),
		"sched_log":           filepath.Join(c.Home, "sched_logs"),
		"scheduling":          "True",
		"scheduler_iteration": "600",
		"sched_cycle_length":  "00:20:00",
	} {
		if got[k] != want {
			t.Errorf("list sched default: %s = %q, want %q (all: %v)", k, got[k], want, got)
		}
	}
	for _, k := range []string{"sched_host", "pbs_version", "state"} {
		if got[k] == "" {
			t.Errorf("list sched default shows no %s: %v", k, got)
		}
	}
	if all := qmgrSchedAttrs(t, c, "list sched"); len(all) != len(got) {
		t.Errorf("list sched shows %v, list sched default %v", all, got)
	}

	// One truth: set through the sched, seen on the server, and back.
	c.MustRun("qmgr", "-c", "set sched scheduler_iteration = 300")
	if v := qmgrListed(t, c, "server", "scheduler_iteration")["scheduler_iteration"]; v != "300" {
		t.Errorf("after set sched scheduler_iteration = 300, list server shows %q", v)
	}
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 450")
	if v := qmgrSchedAttrs(t, c, "list sched scheduler_iteration")["scheduler_iteration"]; v != "450" {
		t.Errorf("after set server scheduler_iteration = 450, list sched shows %q", v)
	}
	c.MustRun("qmgr", "-c", "set sched default sched_cycle_length = 00:10:00, scheduling = False")
	if v := qmgrListed(t, c, "server", "sched_cycle_length")["sched_cycle_length"]; v != "00:10:00" {
		t.Errorf("after set sched sched_cycle_length, list server shows %q", v)
	}
	if v := qmgrListed(t, c, "server", "scheduling")["scheduling"]; v != "False" {
		t.Errorf("after set sched scheduling = False, list server shows %q", v)
	}
	c.MustRun("qmgr", "-c", "set sched log_events = 2047")
	c.MustRun("qmgr", "-c", "set sched opt_backfill_fuzzy = Off")
	got = qmgrSchedAttrs(t, c, "list sched")
	if got["log_events"] != "2047" || got["opt_backfill_fuzzy"] != "off" {
		t.Errorf("list sched after setting log_events and opt_backfill_fuzzy: %v", got)
	}
	// The server's own log_events is another attribute.
	if v := qmgrListed(t, c, "server", "log_events")["log_events"]; v != "511" {
		t.Errorf("set sched log_events changed the server's log_events to %q", v)
	}

	// Refusals, in OpenPBS's words where it has them.
	for _, ro := range []string{"sched_host = h", "sched_port = 1", "sched_priv = /tmp", "sched_log = /tmp", "state = idle", "pbs_version = 1"} {
		qmgrRefused(t, c, "set sched "+ro, "qmgr obj=default svr=default: Cannot set attribute, read only or insufficient permission "+strings.Fields(ro)[0])
	}
	qmgrRefused(t, c, "set sched opt_backfill_fuzzy = low", "only off is taken")
	qmgrRefused(t, c, "set sched opt_backfill_fuzzy = 60", "only off is taken")
	qmgrRefused(t, c, "set sched scheduler_iteration = 0", "must be at least 1")
	qmgrRefused(t, c, "set sched preempt_order = SCR", "Undefined attribute")
	qmgrRefused(t, c, "list sched other", "qmgr obj=other svr=default: Unknown Scheduler")
	qmgrRefused(t, c, "set sched other scheduling = True", "Unknown Scheduler")
	qmgrRefused(t, c, "create sched other", "this system has one scheduler")
	qmgrRefused(t, c, "create sched default", "Scheduler already exists")
	qmgrRefused(t, c, "delete sched default", "Can not delete Scheduler")
	qmgrRefused(t, c, "delete sched other", "Unknown Scheduler")

	// print sched replays: change everything, feed the print back, and
	// the sched is as it was.
	printed := c.MustRun("qmgr", "-c", "print sched")
	for _, line := range []string{"set sched scheduler_iteration = 450\n", "set sched log_events = 2047\n",
		"set sched sched_cycle_length = 00:10:00\n", "set sched scheduling = False\n", "set sched opt_backfill_fuzzy = off\n"} {
		if !strings.Contains(printed, line) {
			t.Errorf("print sched lacks %q:\n%s", line, printed)
		}
	}
	for _, ro := range []string{"sched_host", "sched_port", "sched_priv", "sched_log", "state", "pbs_version", "create"} {
		if strings.Contains(printed, ro) {
			t.Errorf("print sched writes %s:\n%s", ro, printed)
		}
	}
	before := qmgrSchedAttrs(t, c, "list sched")
	c.MustRun("qmgr", "-c", "set sched scheduler_iteration = 99, log_events = 1, sched_cycle_length = 00:01:00")
	c.MustRun("qmgr", "-c", "unset sched opt_backfill_fuzzy")
	if r := c.RunStdin(printed, "qmgr", "-a"); r.Code != 0 {
		t.Fatalf("replaying print sched: %s\n%s", r, printed)
	}
	after := qmgrSchedAttrs(t, c, "list sched")
	delete(before, "state")
	delete(after, "state")
	if !maps.Equal(before, after) {
		t.Errorf("after replaying print sched:\n%v\nwant\n%v", after, before)
	}
}

// The sched object's log_events applies to pbs_sched's log as OpenPBS
// defines its bits: with 0 only errors are logged, so the cycles' sched
// lines stop; with 2047 they are back. The server tells the scheduler
// with a CONFIGURE, whose end it logs as a cycle's.
func TestSchedLogEventsApplies(t *testing.T) {
	t.Parallel()
	c, _ := schedCluster(t)
	waitLog(t, c, `cycle starts: event=scheduler_first`, 10*time.Second)
	// Every connection's end, CONFIGURE's too (SchedCycles leaves those
	// out).
	ends := func() int { return strings.Count(c.ServerLog(), "scheduling cycle ends:") }
	setAndWait := func(cmd string) {
		t.Helper()
		from := ends()
		c.MustRun("qmgr", "-c", cmd)
		testcluster.WaitFor(t, "the scheduler's connection after "+cmd, 10*time.Second, func() (bool, string) {
			n := ends()
			return n > from, strconv.Itoa(n)
		})
	}
	setAndWait("set sched log_events = 0")
	mark := strings.Count(c.SchedLog(), "cycle starts")
	setAndWait("set sched scheduling = True")
	setAndWait("set sched scheduling = True")
	if n := strings.Count(c.SchedLog(), "cycle starts"); n != mark {
		t.Errorf("with log_events = 0 the scheduler still logs its cycles (%d, was %d):\n%s", n, mark, c.SchedLog())
	}
	setAndWait("set sched log_events = 2047")
	c.MustRun("qmgr", "-c", "set sched scheduling = True")
	waitLog(t, c, `(?s)log_events changed.*cycle starts: event=cmd`, 10*time.Second)
}
