package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// Jobs without mom_priv/cgroups: their shepherd is the subreaper of
// everything they start, so what left the job's session is still found
// below it.

// procStat is the fields of /proc/<pid>/stat after the command name
// (field n of proc(5) is f[n-3]); nil when the process is gone.
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// cpuTicks is the user+system time of process pid (clock ticks).
func cpuTicks(pid int) int64 {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// zombiesOf lists the zombie children of pid.
func zombiesOf(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(p); len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// escapedRunning waits until every process escapingJob started with tag
// runs, one of each: a shell's child between its fork and its exec (the
// sleep each starts) still shows the shell's marked command line, and a
// suspension landing in that moment would freeze it so, a second marked
// process for good.
func escapedRunning(t *testing.T, tag string) {
	t.Helper()
	testcluster.WaitFor(t, "the escaped processes of "+tag, 20*time.Second, func() (bool, string) {
		for _, m := range []string{"loop", "fork", "nohup"} {
			if n := len(processesWith(tag + m)); n != 1 {
				return false, fmt.Sprintf("%s%s: %d processes", tag, m, n)
			}
		}
		return true, ""
	})
}

// An unconfined job's processes that left its session (a busy loop under
// setsid, a double fork, nohup) die with the job however it ends: by
// itself (its exit status stays the script's, the escaped loop's cpu is
// the job's, in the mom's samples while it runs and at its end, and the
// orphans that ended meanwhile were reaped, not left zombies), deleted,
// or over its walltime; suspend stops them and resume runs them again. On the old shepherd, which
// killed its session only, they ran on under init.
func TestUnconfinedEscapedProcessesKilled(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", "set server kill_delay = 2")
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3") // the mom reports usage as often
	m := c.AddMom("n1", testcluster.MomOptions{})
	tag := fmt.Sprintf("pbsunc%d_", os.Getpid())

	t.Run("exit", func(t *testing.T) {
		tag := tag + "exit_"
		killTagged(t, tag)
		goFile := filepath.Join(t.TempDir(), "go")
		// Orphans that end at once (reaped by the shepherd as they end),
		// then the script waits for the test's word and exits 3.
		main := "for i in 1 2 3 4 5; do ( sh -c 'exit 0' & ); done\n" +
			"while [ ! -e " + goFile + " ]; do sleep 0.2; done\nexit 3"
		id := c.Submit(escapingJob(tag, main))
		c.MustRun("qrun", id)
		escapedRunning(t, tag)
		loop := processesWith(tag + "loop")[0]
		testcluster.WaitFor(t, "the escaped loop to burn 1.5 s of cpu", 60*time.Second, func() (bool, string) {
			n := cpuTicks(loop)
			return n >= 150, fmt.Sprintf("%d ticks", n)
		})
		b, err := os.ReadFile(filepath.Join(m.Home, "mom_priv", "jobs", id, "shepherd.pid"))
		if err != nil {
			t.Fatal(err)
		}
		shep, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if z := zombiesOf(shep); len(z) > 0 {
			t.Errorf("the job's ended orphans are zombies under its shepherd %d: %v", shep, z)
		}
		// The mom's samples while the job runs count the escaped loop.
		testcluster.WaitFor(t, "the running job's resources_used.cput to count the escaped loop", 30*time.Second, func() (bool, string) {
			cput := attr(t, c, id, "resources_used.cput")
			return cput >= "00:00:01", cput
		})
		if err := os.WriteFile(goFile, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		c.WaitJobState(id, "F", 30*time.Second)
		escapedGone(t, tag)
		if got := attr(t, c, id, "Exit_status"); got != "3" {
			t.Errorf("Exit_status %s, want the script's 3", got)
		}
		if cput := attr(t, c, id, "resources_used.cput"); cput < "00:00:01" {
			t.Errorf("resources_used.cput %s: the escaped busy loop's cpu is not counted", cput)
		}
	})

	t.Run("qdel", func(t *testing.T) {
		tag := tag + "del_"
		killTagged(t, tag)
		id := c.Submit(escapingJob(tag, "sleep 300"))
		c.MustRun("qrun", id)
		escapedRunning(t, tag)
		c.MustRun("qdel", id)
		c.WaitJobState(id, "F", 30*time.Second)
		escapedGone(t, tag)
		if got := attr(t, c, id, "Exit_status"); got != "271" {
			t.Errorf("Exit_status %s, want 271 (deleted)", got)
		}
	})

	t.Run("walltime", func(t *testing.T) {
		tag := tag + "wall_"
		killTagged(t, tag)
		id := c.Submit(escapingJob(tag, "sleep 300"), "-l", "walltime=5")
		c.MustRun("qrun", id)
		escapedRunning(t, tag)
		c.WaitJobState(id, "F", 30*time.Second)
		escapedGone(t, tag)
		if got := attr(t, c, id, "Exit_status"); got != "-29" {
			t.Errorf("Exit_status %s, want -29 (walltime)", got)
		}
	})
	t.Run("suspend", func(t *testing.T) {
		tag := tag + "susp_"
		killTagged(t, tag)
		id := c.Submit(escapingJob(tag, "sleep 300"))
		c.MustRun("qrun", id)
		escapedRunning(t, tag)
		// stopped reports whether what left the session (the loop under
		// setsid, the double fork) is stopped, or runs.
		stopped := func(want bool) (bool, string) {
			for _, name := range []string{"loop", "fork"} {
				pids := processesWith(tag + name)
				if len(pids) != 1 {
					return false, fmt.Sprintf("%s: processes %v", name, pids)
				}
				if f := procStat(pids[0]); len(f) == 0 || (f[0] == "T") != want {
					return false, fmt.Sprintf("%s (pid %d) in state %v", name, pids[0], f[:min(len(f), 1)])
				}
			}
			return true, ""
		}
		c.MustRun("qsig", "-s", "suspend", id)
		testcluster.WaitFor(t, "the escaped processes to stop on suspend", 10*time.Second, func() (bool, string) { return stopped(true) })
		c.MustRun("qsig", "-s", "resume", id)
		testcluster.WaitFor(t, "the escaped processes to run again on resume", 10*time.Second, func() (bool, string) { return stopped(false) })
		c.MustRun("qdel", id)
		c.WaitJobState(id, "F", 30*time.Second)
		escapedGone(t, tag)
	})
}
