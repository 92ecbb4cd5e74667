package integration

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// serverComment returns the server's comment as qstat -Bf shows it ("" for
// none), read on one line (-1) so that a long one is not wrapped.
func serverComment(t *testing.T, c *testcluster.Cluster) string {
	t.Helper()
	out := c.MustRun("qstat", "-Bf", "-1")
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "comment = "); ok {
			return v
		}
	}
	return ""
}

func waitComment(t *testing.T, c *testcluster.Cluster, ok func(string) bool, timeout time.Duration) string {
	t.Helper()
	var got string
	if done, _ := testcluster.Poll(timeout, func() (bool, string) {
		got = serverComment(t, c)
		return ok(got), got
	}); !done {
		t.Fatalf("server comment %q after %v:\n%s", got, timeout, c.SchedLog())
	}
	return got
}

// An admin's round trip with a broken edit: pbs_sched -t finds it with
// file and line before it is saved; saved anyway, it is refused, the
// previous policy keeps running jobs, and qstat -Bf says why (file and
// line) within a cycle; once fixed, the comment goes and the fixed file's
// log_filter applies. An admin's own comment is left alone.
func TestSchedPrivBrokenEdit(t *testing.T) {
	t.Parallel()
	c, _ := schedCluster(t)
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 1")
	priv := filepath.Join(c.Home, "sched_priv")
	path := filepath.Join(priv, "sched_config")
	orig := readFile(t, path)

	if r := c.Run("pbs_sched", "-t", priv); r.Code != 0 || !strings.Contains(r.Stdout, priv+": OK") {
		t.Fatalf("pbs_sched -t on the shipped files: %s", r)
	}
	// Without a directory it checks PBS_HOME/sched_priv.
	if r := c.Run("pbs_sched", "-t"); r.Code != 0 || !strings.Contains(r.Stdout, priv+": OK") {
		t.Fatalf("pbs_sched -t: %s", r)
	}

	// The edit, checked in a copy first, as the shipped file's comment
	// suggests.
	broken := orig + "\nsort_by: smallest_mem_first all\n"
	line := strings.Count(broken, "\n") // the last line
	draft := t.TempDir()
	for _, name := range []string{"holidays", "resource_group", "dedicated_time"} {
		writeByRename(t, filepath.Join(draft, name), readFile(t, filepath.Join(priv, name)))
	}
	writeByRename(t, filepath.Join(draft, "sched_config"), broken)
	where := "sched_config:" + strconv.Itoa(line) + ": sort_by: unknown sort \"smallest_mem_first\"; did you mean smallest_memory_first?"
	r := c.Run("pbs_sched", "-t", draft)
	if r.Code != 1 || !strings.Contains(r.Stdout, filepath.Join(draft, where)) {
		t.Fatalf("pbs_sched -t on the broken draft: %s", r)
	}

	// Saved anyway: refused, logged, and shown in qstat -Bf.
	writeByRename(t, path, broken)
	waitLog(t, c, `sched_priv rejected.*sched_config:`+strconv.Itoa(line)+`: sort_by: unknown sort`, 10*time.Second)
	got := waitComment(t, c, func(s string) bool { return s != "" }, 10*time.Second)
	if want := "pbs_sched: sched_priv refused, the previous policy stays in force: " + filepath.Join(priv, where); got != want {
		t.Fatalf("server comment\n %q\nwant\n %q", got, want)
	}
	// The previous policy still runs jobs.
	id := c.Submit("#!/bin/sh\n")
	c.WaitJobState(id, "F", 20*time.Second)

	// Fixed: the comment goes at the next cycle. The fix also hides the
	// cycle's own lines (log_filter 256 + 64), at once.
	writeByRename(t, path, orig+"\nsort_by: smallest_memory_first all\nlog_filter: 320\n")
	waitComment(t, c, func(s string) bool { return s == "" }, 10*time.Second)
	if !strings.Contains(c.SchedLog(), "server comment cleared") {
		t.Errorf("clearing the comment is not logged:\n%s", c.SchedLog())
	}
	cycles := strings.Count(c.SchedLog(), "scheduling cycle starts")

	// An admin's comment is theirs: the scheduler leaves it alone.
	c.MustRun("qmgr", "-c", "set server comment = \"maintenance on friday\"")
	c.WaitCycles(t, 2) // a whole cycle since
	if got := serverComment(t, c); got != "maintenance on friday" {
		t.Errorf("the admin's comment became %q", got)
	}
	if n := strings.Count(c.SchedLog(), "scheduling cycle starts"); n != cycles {
		t.Errorf("log_filter 320 let %d sched lines through:\n%s", n-cycles, c.SchedLog())
	}
}
