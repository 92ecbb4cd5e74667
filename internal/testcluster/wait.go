package testcluster

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pollEvery is how often Poll looks again: short beside the daemons'
// reaction times, long enough not to load a machine shared by parallel
// test runs.
const pollEvery = 50 * time.Millisecond

// Poll calls cond until it holds or timeout has passed, and returns
// whether it held and what cond last described. It is the one polling
// loop of the tests (testcluster imports nothing of the module's, so that
// every package's tests may use it): WaitFor and every helper that waits
// for a state build on it. Use WaitFor unless a timeout is not a failure.
func Poll(timeout time.Duration, cond func() (bool, string)) (bool, string) {
	deadline := time.Now().Add(timeout)
	for {
		ok, got := cond()
		if ok {
			return true, got
		}
		if time.Now().After(deadline) {
			return false, got
		}
		time.Sleep(pollEvery)
	}
}

// WaitFor waits until cond holds, at most timeout, and fails t with what
// and cond's last description of what it saw otherwise. A test that means
// "nothing happens" waits with it for a positive event that proves the
// time passed (WaitCycles, a later log line) and then asserts the absence.
func WaitFor(t TB, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	if ok, got := Poll(timeout, cond); !ok {
		t.Fatalf("%s: not so after %v; last seen: %s", what, timeout, got)
	}
}

// cycleTimeout bounds WaitCycles: cycles come with events and every
// scheduler_iteration, which tests that count cycles set to a few seconds.
const cycleTimeout = 30 * time.Second

// cycleEnd is the line pbs_server logs when a scheduler's connection for
// a command ends, with the command.
var cycleEnd = regexp.MustCompile(`scheduling cycle ends: cycle=\d+ command=(\S+)`)

// SchedCycles is how many scheduling cycles pbs_server has seen end since
// the cluster started (over its restarts), as its log says: the commands
// that are no scheduling (configure, quit, null) do not count. The
// server's count, not the scheduler's, so that a log_filter in
// sched_config or a site scheduler's own logging changes nothing.
func (c *Cluster) SchedCycles() int {
	n := 0
	for _, m := range cycleEnd.FindAllStringSubmatch(c.ServerLog(), -1) {
		switch m[1] {
		case "configure", "quit", "null":
		default:
			n++
		}
	}
	return n
}

// WaitCycles waits until n more scheduling cycles than when it was called
// have ended (at most 30 s: cycles need events or a short
// scheduler_iteration). A cycle under way at the call counts, so
// WaitCycles(t, 2) is the one that proves a whole cycle ran after the
// call: wait with it before asserting that a cycle did nothing.
func (c *Cluster) WaitCycles(t TB, n int) {
	t.Helper()
	from := c.SchedCycles()
	WaitFor(t, fmt.Sprintf("%d more scheduling cycles (from %d)", n, from), cycleTimeout, func() (bool, string) {
		got := c.SchedCycles() - from
		return got >= n, fmt.Sprintf("%d ended", got)
	})
}

// WaitGone waits until process pid has died, at most timeout, and reports
// whether it did. A zombie counts as dead: once its parent is gone it
// waits for init to reap it.
func WaitGone(pid int, timeout time.Duration) bool {
	gone, _ := Poll(timeout, func() (bool, string) { return syscall.Kill(pid, 0) != nil || zombie(pid), "" })
	return gone
}

// zombie reports whether pid is dead but not yet reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] == "Z"
}
