package integration

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// Typed custom resources (issue 30): qmgr creates, lists, prints and
// deletes them as OpenPBS's does, and every value of one is read and
// compared as its type: a size in a select against a node's size, a
// string_array by its elements (+= adds one), a boolean by its truth
// (a node without it is False); a value that is not of its type is
// refused at qsub naming the resource; one in use cannot be deleted;
// the definitions outlive a restart.
func TestCustomResources(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.AddMom("n2", testcluster.MomOptions{})
	for _, line := range []string{
		"create resource ngpus type=long, flag=nh", // OpenPBS's cgroups hook asks sites for this one
		"create resource scratch type=size, flag=nh",
		"create resource Qlist type=string_array, flag=h",
		"create resource bigmem type=boolean, flag=h",
		"create resource site",
		"set resource site type = string",
		"set node n1 resources_available.scratch = 100GB",
		"set node n2 resources_available.scratch = 1gb",
		"set node n1 resources_available.Qlist = \"a,b\"",
		"set node n2 resources_available.Qlist = a",
		"set node n2 resources_available.Qlist += c",
		"set node n2 resources_available.bigmem = true",
	} {
		if r := c.Run("qmgr", "-c", line); r.Code != 0 {
			t.Fatalf("qmgr -c %q: %s", line, r)
		}
	}
	for _, bad := range []struct{ line, want string }{
		{"create resource ncpus type=long", "ncpus is a built-in resource"},
		{"create resource scratch type=size", "resource scratch exists"},
		{"create resource gpus2 type=string, flag=nh", "only a long, float or size resource can be consumed"},
		{"create resource x type=decimal", "unknown resource type"},
		{"set node n1 resources_available.bigmem = perhaps", "bigmem"},
		{"delete resource nosuch", "Unknown resource"},
	} {
		r := c.Run("qmgr", "-c", bad.line)
		if r.Code == 0 || !strings.Contains(r.Stderr, bad.want) {
			t.Errorf("qmgr -c %q: %s; want an error with %q", bad.line, r, bad.want)
		}
	}
	list := c.MustRun("qmgr", "-c", "list resource scratch")
	if list != "Resource scratch\n    type = size\n    flag = hn\n\n" {
		t.Errorf("list resource scratch:\n%s", list)
	}
	if got := c.MustRun("pbsnodes", "-a"); !strings.Contains(got, "resources_available.Qlist = a,c") {
		t.Errorf("Qlist += c on n2:\n%s", got)
	}
	print := c.MustRun("qmgr", "-c", "print server")
	res, queue := strings.Index(print, "create resource scratch\nset resource scratch type = size\nset resource scratch flag = hn\n"), strings.Index(print, "create queue workq")
	if res < 0 || queue < 0 || res > queue {
		t.Errorf("print server does not define the resources first:\n%s", print)
	}

	c.StartScheduler("pbs_sched")
	run := func(sel string) string {
		t.Helper()
		id := c.Submit("#!/bin/sh\nsleep 60\n", "-l", "select="+sel)
		c.WaitJobState(id, "R", 20*time.Second)
		host, _, _ := strings.Cut(attr(t, c, id, "exec_host"), "/")
		return host
	}
	for _, want := range []struct{ sel, host string }{
		{"1:ncpus=1:scratch=10gb", "n1"}, // 100gb holds 10gb; n2's 1gb does not
		{"1:ncpus=1:Qlist=c", "n2"},      // an element of n2's a,c
		{"1:ncpus=1:bigmem=false", "n1"}, // n1 has no bigmem: False
	} {
		if got := run(want.sel); got != want.host {
			t.Errorf("select=%s ran on %q, want %s", want.sel, got, want.host)
		}
	}
	if got := c.MustRun("pbsnodes", "n1"); !strings.Contains(got, "resources_assigned.scratch = 10485760kb") {
		t.Errorf("n1's resources_assigned does not count the scratch taken:\n%s", got)
	}
	for _, bad := range []struct{ sel, want string }{
		{"1:bigmem=maybe", "bigmem"},
		{"1:scratch=lots", "scratch"},
	} {
		r := c.RunStdin("#!/bin/sh\n", "qsub", "-l", "select="+bad.sel)
		if r.Code == 0 || !strings.Contains(r.Stderr, bad.want) {
			t.Errorf("qsub -l select=%s: %s; want it refused naming %s", bad.sel, r, bad.want)
		}
	}
	if r := c.Run("qmgr", "-c", "delete resource scratch"); r.Code == 0 || !strings.Contains(r.Stderr, "Resource busy on") {
		t.Errorf("delete resource scratch while a job uses it: %s", r)
	}
	if r := c.Run("qmgr", "-c", "delete resource site"); r.Code != 0 {
		t.Errorf("delete resource site: %s", r)
	}

	c.KillServer(syscall.SIGTERM)
	c.StartServer()
	list = c.MustRun("qmgr", "-c", "list resource")
	for _, want := range []string{"Resource Qlist\n    type = string_array\n    flag = h\n", "Resource ngpus\n", "Resource scratch\n"} {
		if !strings.Contains(list, want) {
			t.Errorf("after a restart, list resource lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "Resource site") {
		t.Errorf("a deleted resource came back:\n%s", list)
	}
}

// sched_config's resources: line (issue 30): the scheduler counts and
// matches only the resources it names, as OpenPBS's: a job asking more
// of an uncounted resource than any node has still runs, and is assigned
// what it asked for; once the line names the resource, such a job waits.
func TestSchedConfigResourcesLine(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "create resource scratch type=size, flag=nh")
	c.MustRun("qmgr", "-c", "set node n1 resources_available.scratch = 1gb")
	c.StartScheduler("pbs_sched")
	path := c.Home + "/sched_priv/sched_config"
	orig := readFile(t, path)
	reload := func(line string) {
		t.Helper()
		loaded := strings.Count(c.SchedLog(), "configuration loaded")
		writeByRename(t, path, orig+"\n"+line+"\n")
		testcluster.WaitFor(t, "sched_config with "+line, 10*time.Second, func() (bool, string) {
			return strings.Count(c.SchedLog(), "configuration loaded") > loaded, "\n" + c.SchedLog()
		})
	}
	reload(`resources: "ncpus, mem, arch, host, vnode"`)
	id := c.Submit("#!/bin/sh\nsleep 60\n", "-l", "select=1:ncpus=1:scratch=500gb")
	c.WaitJobState(id, "R", 20*time.Second)
	if got := c.MustRun("pbsnodes", "n1"); !strings.Contains(got, "resources_assigned.scratch = 524288000kb") {
		t.Errorf("the uncounted scratch is not assigned:\n%s", got)
	}
	c.MustRun("qdel", id)
	c.WaitJobState(id, "F", 20*time.Second)

	reload(`resources: "ncpus, mem, arch, host, vnode, scratch"`)
	id = c.Submit("#!/bin/sh\nsleep 60\n", "-l", "select=1:ncpus=1:scratch=500gb")
	small := c.Submit("#!/bin/sh\n", "-l", "select=1:ncpus=1:scratch=1gb")
	c.WaitJobState(small, "F", 20*time.Second)
	if st := attr(t, c, id, "job_state"); st != "Q" {
		t.Errorf("a job asking 500gb of a counted 1gb: state %q, comment %q", st, attr(t, c, id, "comment"))
	}
}
