package integration

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
)

// fsUser is a throw-away login for fair-share tests.
type fsUser struct {
	name string
	cred testcluster.Cred
}

// newUsers creates users (root only) removed when the test ends.
func newUsers(t *testing.T, short ...string) []fsUser {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create users")
	}
	sfx := strconv.Itoa(os.Getpid() % 100000)
	var out []fsUser
	for _, s := range short {
		name := "pbsfs_" + s + "_" + sfx
		if b, err := exec.Command("useradd", "-M", "-s", "/bin/sh", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v %s", name, err, b)
		}
		t.Cleanup(func() { exec.Command("userdel", "-f", name).Run() })
		pw, err := user.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.ParseUint(pw.Uid, 10, 32)
		gid, _ := strconv.ParseUint(pw.Gid, 10, 32)
		out = append(out, fsUser{name: name, cred: testcluster.Cred{UID: uint32(uid), GID: uint32(gid)}})
	}
	return out
}

// submitAs submits a job as u with its output in dir (writable by all).
func submitAs(t *testing.T, c *testcluster.Cluster, u fsUser, dir, script string, args ...string) string {
	t.Helper()
	r := c.RunAs(u.cred, script, "qsub", append([]string{"-o", dir + "/", "-e", dir + "/"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("qsub as %s: %s", u.name, r)
	}
	return strings.TrimSpace(r.Stdout)
}

// fairShareCluster is one mom with one cpu and pbs_sched with fair share
// on (sync_time 0: usage saved after every cycle that changed it), the
// given resource_group and usage file; scheduling off until the caller
// turns it on.
func fairShareCluster(t *testing.T, groups string, usage *schedpriv.UsageState) (*testcluster.Cluster, string) {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 1")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	priv := filepath.Join(c.Home, "sched_priv")
	os.MkdirAll(priv, 0o750)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(priv, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sched_config", "fair_share: true all\nhalf_life: 24:00:00\nsync_time: 0\nunknown_shares: 10\nbackfill: false all\n")
	write("resource_group", groups)
	if usage != nil {
		if err := privdir.WriteUsageFile(priv, usage); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(c.Home, "out")
	os.Mkdir(out, 0o777)
	os.Chmod(out, 0o777)
	return c, out
}

// Two users with equal shares; the one with large past usage waits for
// the other although it submitted first.
func TestFairShareOrder(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostUsers)
	us := newUsers(t, "heavy", "light")
	heavy, light := us[0], us[1]
	groups := heavy.name + " 10 root 50\n" + light.name + " 20 root 50\n"
	usage := &schedpriv.UsageState{Entities: schedpriv.Usage{heavy.name: 1e6}}
	c, out := fairShareCluster(t, groups, usage)
	blocker := c.Submit("#!/bin/sh\nsleep 2\n")
	c.MustRun("qrun", blocker)
	h := submitAs(t, c, heavy, out, "#!/bin/sh\nsleep 2\n")
	l := submitAs(t, c, light, out, "#!/bin/sh\nsleep 2\n")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.WaitJobState(h, "F", 30*time.Second)
	c.WaitJobState(l, "F", 30*time.Second)
	hs, ls := startTime(t, c, h), startTime(t, c, l)
	if !ls.Before(hs) {
		t.Fatalf("the light user's job started at %v, the heavy user's at %v: fair share should start the light one first\n%s", ls, hs, c.SchedLog())
	}
}

// job_sort_formula reaches the live scheduler and comes before fair
// share: a formula on the jobs' Priority starts the heavy user's job
// first, where fair share alone (TestFairShareOrder) starts the light
// user's; its fair-share term is worked out from the same usage.
func TestJobSortFormulaOrder(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostUsers)
	us := newUsers(t, "fheavy", "flight")
	heavy, light := us[0], us[1]
	groups := heavy.name + " 10 root 50\n" + light.name + " 20 root 50\n"
	usage := &schedpriv.UsageState{Entities: schedpriv.Usage{heavy.name: 1e6}}
	c, out := fairShareCluster(t, groups, usage)
	cfg := filepath.Join(c.Home, "sched_priv", "sched_config")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`job_sort_formula: "job_priority + fairshare_factor"` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	blocker := c.Submit("#!/bin/sh\nsleep 2\n")
	c.MustRun("qrun", blocker)
	l := submitAs(t, c, light, out, "#!/bin/sh\nsleep 2\n")
	h := submitAs(t, c, heavy, out, "#!/bin/sh\nsleep 2\n", "-p", "10")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.WaitJobState(h, "F", 30*time.Second)
	c.WaitJobState(l, "F", 30*time.Second)
	hs, ls := startTime(t, c, h), startTime(t, c, l)
	if !hs.Before(ls) {
		t.Fatalf("the heavy user's job (Priority 10) started at %v, the light user's at %v: the formula should start the heavy one first\n%s", hs, ls, c.SchedLog())
	}
}

// Usage is counted from the jobs' cpu time, saved, survives a kill -9 of
// the scheduler, and a damaged usage file is set aside with a message
// naming it.
func TestFairShareUsagePersists(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostUsers)
	us := newUsers(t, "burn")
	burn := us[0]
	c, out := fairShareCluster(t, burn.name+" 10 root 1\n", nil)
	s := c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	// A busy loop until the shell itself has used 1.5 s of cpu (its
	// /proc stat, read with builtins only, so no time goes to children):
	// cput counts whole seconds, and a loop timed by the wall clock got
	// less than one on a host busy with other tests.
	burner := "#!/bin/sh\nwhile :; do\n\tread -r st < /proc/$$/stat\n\tset -- $st\n\t[ $((${14} + ${15})) -ge 150 ] && break\n\ti=0; while [ $i -lt 10000 ]; do i=$((i+1)); done\ndone\n"
	id := submitAs(t, c, burn, out, burner)
	c.WaitJobState(id, "F", 30*time.Second)
	priv := filepath.Join(c.Home, "sched_priv")
	var got float64
	testcluster.WaitFor(t, "usage of "+burn.name+" at 1 s of cpu with the job settled", 20*time.Second, func() (bool, string) {
		st, err := privdir.ReadUsageFile(priv)
		if err == nil {
			got = st.Entities[burn.name]
			if got >= 1 && len(st.Jobs) == 0 {
				return true, ""
			}
		}
		c.MustRun("qmgr", "-c", "set server scheduling = True") // a cycle
		return false, fmt.Sprintf("%v (%v)\n%s", got, err, c.SchedLog())
	})
	if cput := attr(t, c, id, "resources_used.cput"); cput == "" {
		t.Fatalf("the job has no resources_used.cput")
	}
	// kill -9 and restart: the usage is read back (pbsfs shows it).
	s.Crash()
	s.WaitDown(10 * time.Second)
	s = c.StartScheduler("pbs_sched")
	line := c.MustRun("pbsfs", "-g", burn.name)
	if !strings.Contains(line, burn.name) || !regexp.MustCompile(`usage\s*[:=]?\s*[1-9]`).MatchString(line) {
		t.Errorf("pbsfs -g after restart:\n%s", line)
	}
	// A truncated usage file: set aside, named in the log, usage from zero.
	s.Kill(syscall.SIGTERM)
	s.WaitDown(10 * time.Second)
	path := filepath.Join(priv, schedpriv.UsageFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, data[:len(data)/2], 0o644)
	c.StartScheduler("pbs_sched")
	waitLog(t, c, `usage file unreadable: set aside.*`+regexp.QuoteMeta(path)+`: truncated`, 10*time.Second)
	aside, _ := filepath.Glob(path + ".damaged-*")
	if len(aside) != 1 {
		t.Fatalf("set-aside files %v", aside)
	}
	if kept, _ := os.ReadFile(aside[0]); string(kept) != string(data[:len(data)/2]) {
		t.Error("the set-aside file is not the damaged one")
	}
}

// startTime is a job's stime as qstat -f prints it.
func startTime(t *testing.T, c *testcluster.Cluster, id string) time.Time {
	t.Helper()
	v := attr(t, c, id, "stime")
	at, err := time.ParseInLocation(time.ANSIC, v, time.Local)
	if err != nil {
		t.Fatalf("stime of %s: %q: %v", id, v, err)
	}
	return at
}
