package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// loadavg is this host's one-minute load average.
func loadavg(t *testing.T) float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		t.Skip("no /proc/loadavg")
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

// Load balancing across two time-shared moms: jobs of one cycle spread
// by load, the comment names the node, nodes over max_load take nothing
// (the job waits saying so), and a node coming back under its load limit
// starts a cycle at once.
func TestLoadBalancing(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")       // reports every second
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 600") // only events start cycles
	for _, n := range []string{"t1", "t2"} {
		c.AddMom(n, testcluster.MomOptions{})
		c.MustRun("qmgr", "-c", "set node "+n+" resources_available.ncpus = 4")
		c.MustRun("qmgr", "-c", "set node "+n+" ntype = time-shared")
		// Room above whatever load the host has (other tests run beside
		// this one): without a max_load the node's 4 cpus would be it.
		c.MustRun("qmgr", "-c", "set node "+n+" max_load = 1000")
	}
	if out := c.MustRun("pbsnodes", "t1"); !strings.Contains(out, "ntype = time-shared") {
		t.Fatalf("pbsnodes does not show the node type:\n%s", out)
	}
	priv := filepath.Join(c.Home, "sched_priv")
	os.MkdirAll(priv, 0o750)
	os.WriteFile(filepath.Join(priv, "sched_config"), []byte("load_balancing: true all\nbackfill: false all\n"), 0o644)
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.StartScheduler("pbs_sched")

	// One cycle, two jobs: the second goes where the first did not.
	a := c.Submit("#!/bin/sh\nsleep 60\n", "-l", "select=1:ncpus=1")
	b := c.Submit("#!/bin/sh\nsleep 60\n", "-l", "select=1:ncpus=1")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.WaitJobState(a, "R", 20*time.Second)
	c.WaitJobState(b, "R", 20*time.Second)
	ha, hb := firstHost(attr(t, c, a, "exec_host")), firstHost(attr(t, c, b, "exec_host"))
	if ha == hb {
		t.Fatalf("both jobs on %s; load balancing should spread them", ha)
	}
	if got := attr(t, c, a, "comment"); !strings.HasPrefix(got, "Job run on node "+ha+" - started on ") {
		t.Errorf("comment %q should name the node", got)
	}
	c.MustRun("qdel", a, b)

	// Some load for the load limits to act on.
	burn := exec.Command("sh", "-c", "while :; do :; done")
	if err := burn.Start(); err != nil {
		t.Fatal(err)
	}
	defer burn.Process.Kill()
	if rose, _ := testcluster.Poll(30*time.Second, func() (bool, string) { return loadavg(t) >= 0.05, "" }); !rose {
		t.Skip("the load average does not rise on this host")
	}
	// Both nodes over their max load: busy, and a new job waits.
	for _, n := range []string{"t1", "t2"} {
		c.MustRun("qmgr", "-c", "set node "+n+" max_load = 0")
	}
	c.WaitNodeState("t1", "busy", 10*time.Second)
	c.WaitNodeState("t2", "busy", 10*time.Second)
	j := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1")
	waitAttr(t, c, j, "comment", equals("Not Running: All timesharing nodes are too loaded to run job"), 20*time.Second)
	// t2's limit is raised: at its next report it is free again, which
	// starts a cycle (no other event is coming: scheduler_iteration 600).
	c.MustRun("qmgr", "-c", "set node t2 max_load = 1000")
	c.WaitJobState(j, "R", 20*time.Second)
	if h := firstHost(attr(t, c, j, "exec_host")); h != "t2" {
		t.Errorf("job ran on %s, want t2 (t1 is over its max load)", h)
	}
	if !strings.Contains(c.ServerLog(), "node load: node=t2 busy=false") {
		t.Errorf("the server did not log t2 coming back under its load limit:\n%s", c.ServerLog())
	}
}

func firstHost(execHost string) string {
	h, _, _ := strings.Cut(execHost, "/")
	return h
}

// equals is a waitAttr condition.
func equals(want string) func(string) bool { return func(v string) bool { return v == want } }
