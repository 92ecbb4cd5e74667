package integration

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// A host split into vnodes as an OpenPBS site does it (issue 30): pbs_mom
// -s insert puts a version-2 file in mom_priv/config.d, SIGHUP makes the
// mom report the vnodes, the server creates them on that mom, a job runs
// on two of them under the one mom (exec_vnode names the vnodes, exec_host
// and PBS_NODEFILE the host), and a vnode whose definition is removed goes
// Stale.
func TestMomVnodeDefinitions(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	m := c.AddMom("h1", testcluster.MomOptions{})
	def := filepath.Join(c.Home, "h1.vnodes")
	text := "$configversion 2\n# the cpus are the vnodes'\nh1: resources_available.ncpus = 0\n" +
		"h1[0]: resources_available.ncpus = 1\nh1[0]: resources_available.mem = 1gb\n" +
		"h1[1]: resources_available.ncpus = 1\nh1[1]: resv_enable = False\n"
	if err := os.WriteFile(def, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	mom := func(args ...string) testcluster.Result {
		return c.RunEnv(m.Env(), "pbs_mom", append([]string{"-s"}, args...)...)
	}
	if r := mom("insert", "vnodes", def); r.Code != 0 {
		t.Fatalf("pbs_mom -s insert: %s", r)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"insert", "vnodes", def}, `"vnodes" already exists`},
		{[]string{"insert", "PBSvnodes", def}, `reserved for PBS`},
		{[]string{"insert", "other", filepath.Join(c.Home, "nosuch")}, "no such file"},
		{[]string{"remove", "nosuch"}, `"nosuch" does not exist`},
		{[]string{"frobnicate"}, "usage: pbs_mom -s insert NAME FILE"},
	} {
		if r := mom(tc.args...); r.Code == 0 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("pbs_mom -s %v: want a refusal naming %q, got %s", tc.args, tc.want, r)
		}
	}
	bad := filepath.Join(c.Home, "bad.vnodes")
	os.WriteFile(bad, []byte("$configversion 2\nh1[2]: sharing = sometimes\n"), 0o644)
	if r := mom("insert", "bad", bad); r.Code == 0 || !strings.Contains(r.Stderr, `bad:2: sharing = "sometimes"`) {
		t.Errorf("a file that does not parse was not refused with its line: %s", r)
	}
	if r := mom("list"); r.Stdout != "vnodes\n" {
		t.Errorf("pbs_mom -s list: %s", r)
	}
	if r := mom("show", "vnodes"); r.Stdout != text {
		t.Errorf("pbs_mom -s show: %s", r)
	}

	syscall.Kill(m.Pid(), syscall.SIGHUP)
	c.WaitNodeState("h1[0]", "free", 20*time.Second)
	c.WaitNodeState("h1[1]", "free", 20*time.Second)
	v0 := c.MustRun("qmgr", "-c", "list node h1[0]")
	for _, want := range []string{"Mom = localhost\n", "resources_available.ncpus = 1\n", "resources_available.mem = 1048576kb\n", "resources_available.host = h1\n", "resources_available.vnode = h1[0]\n"} {
		if !strings.Contains(v0, want) {
			t.Errorf("vnode h1[0] lacks %q:\n%s", want, v0)
		}
	}
	if v1 := c.MustRun("qmgr", "-c", "list node h1[1]"); !strings.Contains(v1, "resv_enable = False\n") {
		t.Errorf("vnode h1[1]'s resv_enable from its definition not applied:\n%s", v1)
	}
	testcluster.WaitFor(t, "the natural node's ncpus from the definition", 20*time.Second, func() (bool, string) {
		out := c.MustRun("qmgr", "-c", "list node h1")
		return strings.Contains(out, "resources_available.ncpus = 0\n"), out
	})

	id := c.Submit("#!/bin/sh\ncat \"$PBS_NODEFILE\"\nsleep 2\n", "-N", "vn", "-l", "select=2:ncpus=1")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "R", 20*time.Second)
	ev, _ := c.JobAttr(id, "exec_vnode")
	eh, _ := c.JobAttr(id, "exec_host")
	if ev != "(h1[0]:ncpus=1)+(h1[1]:ncpus=1)" && ev != "(h1[1]:ncpus=1)+(h1[0]:ncpus=1)" || eh != "h1/0+h1/1" {
		t.Errorf("exec_vnode %q exec_host %q: want the two vnodes, and the host twice", ev, eh)
	}
	if out := c.MustRun("pbsnodes", "h1[0]"); !strings.Contains(out, id) {
		t.Errorf("pbsnodes h1[0] does not show the job:\n%s", out)
	}
	c.WaitJobState(id, "F", 30*time.Second)
	if es, _ := c.JobAttr(id, "Exit_status"); es != "0" {
		t.Errorf("the job on the vnodes ended with %q (the mom took it for another node's?)\n%s", es, m.Log())
	}
	if out := readFile(t, filepath.Join(c.Home, "vn.o"+strings.SplitN(id, ".", 2)[0])); out != "h1\nh1\n" {
		t.Errorf("PBS_NODEFILE %q, want the host once per chunk", out)
	}

	if r := mom("remove", "vnodes"); r.Code != 0 {
		t.Fatalf("pbs_mom -s remove: %s", r)
	}
	syscall.Kill(m.Pid(), syscall.SIGHUP)
	c.WaitNodeState("h1[0]", "Stale", 20*time.Second)
	if st := c.NodeState("h1"); st != "free" {
		t.Errorf("the natural node is %q after its vnodes went stale", st)
	}
	// A stale vnode takes no job: one that only it could hold stays queued.
	id2 := c.Submit("#!/bin/sh\ntrue\n", "-l", "select=1:ncpus=1:vnode=h1[0]")
	if r := c.Run("qrun", id2); r.Code == 0 {
		t.Errorf("qrun onto a stale vnode succeeded: %s", r)
	}
}

// Node names take one bracketed index, as vnodes are named; anything else
// with brackets is refused naming the rule.
func TestVnodeNamesInQmgr(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "create node big[3] Mom=localhost")
	if out := c.MustRun("pbsnodes", "-a"); !strings.Contains(out, "big[3]\n") {
		t.Errorf("pbsnodes -a:\n%s", out)
	}
	for _, bad := range []string{"big[", "big[]", "big[1][2]", "big[a.b", "[1]"} {
		if r := c.Run("qmgr", "-c", "create node "+bad); r.Code == 0 || !strings.Contains(r.Stderr, "[INDEX]") && !strings.Contains(r.Stderr, "illegal object name") {
			t.Errorf("create node %q: %s", bad, r)
		}
	}
}
