package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// needPython skips a test when Debian's python3, which hooks run with,
// is not installed (scripts/test.sh installs it).
func needPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("site hooks need /usr/bin/python3 (apt-get install python3)")
	}
}

// hookFile writes a hook script (or configuration file) where qmgr, run
// as root from the cluster's home, reads it.
func hookFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hookCluster is a server that starts jobs only on qrun (scheduling off)
// and, withMoms, hears its moms every second (node_check_rate 3): the
// hooks of the moms' events reach them with the answer to a report.
func hookCluster(t *testing.T, withMoms bool) *testcluster.Cluster {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	if withMoms {
		c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	}
	return c
}

// waitHooks waits until mom m holds the n hooks the server gave it.
func waitHooks(t *testing.T, m *testcluster.Mom, n int) {
	t.Helper()
	want := fmt.Sprintf("hooks received from the server: hooks=%d ", n)
	waitFor(t, want, 20*time.Second, func() bool { return strings.Contains(m.Log(), want) })
}

// addHook creates hook name for events and imports script.
func addHook(t *testing.T, c *testcluster.Cluster, name, events, script string, settings ...string) {
	t.Helper()
	c.MustRun("qmgr", "-c", "create hook "+name)
	c.MustRun("qmgr", "-c", "set hook "+name+" event = "+events)
	for _, s := range settings {
		c.MustRun("qmgr", "-c", "set hook "+name+" "+s)
	}
	c.MustRun("qmgr", "-c", "import hook "+name+" application/x-python default "+hookFile(t, name+".py", script))
}

// A queuejob hook written as OpenPBS's documentation writes them: it
// sets a default walltime through pbs.duration, reads its configuration
// file, refuses a job with its own message, and its exception and its
// alarm refuse with OpenPBS's words, the traceback in the server's log.
const queuejobHook = `import pbs, json
e = pbs.event()
j = e.job
with open(pbs.hook_config_filename) as f:
    conf = json.load(f)
if j.Resource_List["walltime"] is None:
    j.Resource_List["walltime"] = pbs.duration(conf["default_walltime"])
if j.Job_Name == "bad":
    e.reject("jobs named bad are refused by " + e.hook_name)
if j.Job_Name == "boom":
    raise ValueError("boom from the hook")
if j.Job_Name == "slow":
    import time
    time.sleep(30)
if j.Job_Name == "urgent":
    j.Priority = 1000
    j.comment = "priority set by the hook"
e.accept()
`

func TestQueuejobHook(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, false)
	addHook(t, c, "qj", "queuejob", queuejobHook, "alarm = 3")
	c.MustRun("qmgr", "-c", "import hook qj application/x-config default "+hookFile(t, "qj.json", `{"default_walltime": "01:30:00"}`))

	id := c.Submit("#!/bin/sh\n")
	if got := attr(t, c, id, "Resource_List.walltime"); got != "01:30:00" {
		t.Errorf("walltime the hook set: %q\n%s", got, c.MustRun("qstat", "-f", id))
	}
	kept := c.Submit("#!/bin/sh\n", "-l", "walltime=00:05:00")
	if got := attr(t, c, kept, "Resource_List.walltime"); got != "00:05:00" {
		t.Errorf("a given walltime was changed: %q", got)
	}
	urgent := c.Submit("#!/bin/sh\n", "-N", "urgent")
	if p, cm := attr(t, c, urgent, "Priority"), attr(t, c, urgent, "comment"); p != "1000" || cm != "priority set by the hook" {
		t.Errorf("Priority %q comment %q, want what the hook set", p, cm)
	}

	for _, tc := range []struct{ name, want string }{
		{"bad", "qsub: jobs named bad are refused by qj\n"},
		{"boom", "qsub: request rejected as filter hook 'qj' encountered an exception. Please inform Admin\n"},
		{"slow", "qsub: request rejected as filter hook 'qj' got an alarm call. Please inform Admin\n"},
	} {
		start := time.Now()
		r := c.RunStdin("#!/bin/sh\n", "qsub", "-N", tc.name)
		if r.Code == 0 || r.Stderr != tc.want || r.Stdout != "" {
			t.Errorf("qsub -N %s: %s\nwant stderr %q", tc.name, r, tc.want)
		}
		if tc.name == "slow" && time.Since(start) > 20*time.Second {
			t.Errorf("the alarm of 3 s let the hook run %v", time.Since(start))
		}
	}
	if log := c.ServerLog(); !strings.Contains(log, "ValueError: boom from the hook") || !strings.Contains(log, "queuejob request rejected by 'qj'") {
		t.Errorf("the server log lacks the traceback or the rejection:\n%s", log)
	}
	if out := c.MustRun("qselect"); strings.Count(out, "\n") != 3 {
		t.Errorf("jobs queued: %q, want the three accepted", out)
	}

	// debug = true logs what the hook was given and what it did.
	c.MustRun("qmgr", "-c", "set hook qj debug = true")
	c.Submit("#!/bin/sh\n", "-N", "debugged")
	if log := c.ServerLog(); !strings.Contains(log, "hook debug: the event: hook=qj") || !strings.Contains(log, `Job_Name\":\"debugged`) ||
		!strings.Contains(log, "hook debug: the outcome: hook=qj outcome=accepted") {
		t.Errorf("a debug hook's run is not in the log:\n%s", log)
	}

	// A disabled hook does not run.
	c.MustRun("qmgr", "-c", "set hook qj enabled = false")
	if r := c.RunStdin("#!/bin/sh\n", "qsub", "-N", "bad"); r.Code != 0 {
		t.Errorf("a disabled hook still refused: %s", r)
	}
}

// A hook that does not compile is refused at import with Python's
// message, and the hook keeps what it had; hooks persist across a restart
// of the server, run again after it, and only managers see them.
func TestHookImportCheckPersistAndRights(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, false)
	addHook(t, c, "guard", "queuejob", `import pbs
e = pbs.event()
if e.job.Job_Name == "bad":
    e.reject("no bad jobs")
`)
	r := c.Run("qmgr", "-c", "import hook guard application/x-python default "+hookFile(t, "broken.py", "import pbs\ndef f(:\n"))
	if r.Code == 0 || !strings.Contains(r.Stderr, "qmgr obj=guard svr=default: Failed to compile script, hook 'guard' contents not overwritten:") ||
		!strings.Contains(r.Stderr, "SyntaxError") || !strings.HasSuffix(r.Stderr, "qmgr: hook error returned from server\n") {
		t.Errorf("import of a broken script: %s", r)
	}
	r = c.Run("qmgr", "-c", "import hook guard application/x-config default "+hookFile(t, "c.json", "{not json"))
	if r.Code == 0 || !strings.Contains(r.Stderr, "Failed to validate config file, hook 'guard' config file not overwritten") {
		t.Errorf("import of a broken config file: %s", r)
	}
	if r := c.Run("qmgr", "-c", "set hook guard order = 1001"); r.Code == 0 || !strings.Contains(r.Stderr, "order given (1001) is outside the acceptable range of [1, 1000] for type 'site'.") {
		t.Errorf("order 1001: %s", r)
	}
	if r := c.Run("qmgr", "-c", "set hook guard event = provision"); r.Code == 0 || !strings.Contains(r.Stderr, "provision") {
		t.Errorf("an event we do not run was taken: %s", r)
	}

	want := "Hook guard\n    type = site\n    enabled = true\n    event = queuejob\n    user = pbsadmin\n    alarm = 30\n    order = 1\n    debug = false\n    fail_action = none\n\n"
	if got := c.MustRun("qmgr", "-c", "list hook guard"); got != want {
		t.Errorf("list hook:\n%s\nwant\n%s", got, want)
	}
	exported := c.MustRun("qmgr", "-c", "export hook guard application/x-python default")
	if !strings.Contains(exported, `e.reject("no bad jobs")`) {
		t.Errorf("export hook: %q", exported)
	}
	printed := c.MustRun("qmgr", "-c", "print hook")

	c.KillServer(syscall.SIGTERM)
	c.StartServer()
	if got := c.MustRun("qmgr", "-c", "list hook guard"); got != want {
		t.Errorf("list hook after a restart:\n%s\nwant\n%s", got, want)
	}
	if r := c.RunStdin("#!/bin/sh\n", "qsub", "-N", "bad"); r.Code == 0 || r.Stderr != "qsub: no bad jobs\n" {
		t.Errorf("the hook after a restart: %s", r)
	}

	// What print wrote recreates the hook on a new server, files and all.
	d := testcluster.New(t, testcluster.Options{})
	if r := d.RunStdin(printed, "qmgr"); r.Code != 0 || r.Stderr != "" {
		t.Fatalf("replaying print hook:\n%s\n%s", printed, r)
	}
	if got := d.MustRun("qmgr", "-c", "export hook guard application/x-python default"); got != exported {
		t.Errorf("replayed script %q, want %q", got, exported)
	}
	if r := d.RunStdin("#!/bin/sh\n", "qsub", "-N", "bad"); r.Code == 0 || r.Stderr != "qsub: no bad jobs\n" {
		t.Errorf("the replayed hook: %s", r)
	}

	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	for _, cmd := range []string{"list hook", "print hook", "create hook mine", "export hook guard application/x-python default"} {
		if r := c.RunAs(nobody, "", "qmgr", "-c", cmd); r.Code == 0 || r.Stdout != "" {
			t.Errorf("nobody's %q: %s", cmd, r)
		}
	}
	c.MustRun("qmgr", "-c", "delete hook guard")
	if got := c.MustRun("qmgr", "-c", "list hook"); got != "" {
		t.Errorf("list hook after delete: %q", got)
	}
	c.Submit("#!/bin/sh\n", "-N", "bad")
}

// modifyjob and movejob hooks judge qalter and qmove; hooks of one event
// run in their order, each seeing what the one before changed.
func TestModifyjobAndMovejobHooks(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, false)
	c.MustRun("qmgr", "-c", "create queue closed queue_type=e, enabled=true, started=true")
	c.MustRun("qmgr", "-c", "create queue open queue_type=e, enabled=true, started=true")
	addHook(t, c, "limit", "modifyjob", `import pbs
e = pbs.event()
wt = e.job.Resource_List["walltime"]
if wt is not None and wt > pbs.duration("48:00:00"):
    e.reject("walltime over 48 hours is refused (asked %s, job had %s)" % (wt, e.job_o.Resource_List["walltime"]))
`)
	// Two movejob hooks: the first sends moves to "closed" to "open", the
	// second (later in order) sees the destination the first left.
	addHook(t, c, "redirect", "movejob", `import pbs
e = pbs.event()
if e.job.queue.name == "closed":
    e.job.queue = pbs.server().queue("open")
`, "order = 1")
	addHook(t, c, "audit", "movejob", `import pbs
e = pbs.event()
pbs.logmsg(pbs.LOG_DEBUG, "audit sees %s from %s" % (e.job.queue.name, e.src_queue.name))
if e.job.queue.name == "closed":
    e.reject("closed got through")
`, "order = 2")

	id := c.Submit("#!/bin/sh\n", "-l", "walltime=01:00:00")
	r := c.Run("qalter", "-l", "walltime=100:00:00", id)
	if r.Code == 0 || !strings.Contains(r.Stderr, "walltime over 48 hours is refused (asked 100:00:00, job had 01:00:00)") {
		t.Errorf("qalter past the hook's limit: %s", r)
	}
	if got := attr(t, c, id, "Resource_List.walltime"); got != "01:00:00" {
		t.Errorf("walltime %q after a refused qalter", got)
	}
	c.MustRun("qalter", "-l", "walltime=10:00:00", id)
	if got := attr(t, c, id, "Resource_List.walltime"); got != "10:00:00" {
		t.Errorf("walltime %q after an accepted qalter", got)
	}

	c.MustRun("qmove", "closed", id)
	if got := attr(t, c, id, "queue"); got != "open" {
		t.Errorf("queue %q, want open (the hook's redirect)", got)
	}
	if log := c.ServerLog(); !strings.Contains(log, "audit sees open from workq") {
		t.Errorf("the second hook did not see the first's change:\n%s", log)
	}
}

// A runjob hook judges every start, qrun's and the scheduler's: a refusal
// leaves the job queued (what it set of its holds stands), the scheduler
// comments it as OpenPBS does ("Not Running: PBS Error: ..."), and what an
// accepting hook sets is the job's as it runs; a change of what placed it
// is refused.
func TestRunjobHook(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, false)
	c.MustRun("qmgr", "-c", "create resource site type=string")
	c.AddMom("n1", testcluster.MomOptions{})
	addHook(t, c, "rj", "runjob", `import pbs
e = pbs.event()
j = e.job
if j.Job_Name == "grab":
    j.Resource_List["ncpus"] = 64
if j.Resource_List["walltime"] is None:
    if j.Job_Name == "holdme":
        j.Hold_Types = pbs.hold_types("s")
    e.reject("%s: no walltime specified" % e.hook_name)
j.Resource_List["site"] = "site_value"
pbs.logmsg(pbs.LOG_DEBUG, "rj saw %s requested by %s" % (j.id, e.requestor))
`)
	held := c.Submit("#!/bin/sh\nsleep 60\n", "-N", "holdme")
	r := c.Run("qrun", held)
	if r.Code == 0 || !strings.Contains(r.Stderr, "rj: no walltime specified") {
		t.Errorf("qrun of a job the hook refuses: %s", r)
	}
	if st, h := attr(t, c, held, "job_state"), attr(t, c, held, "Hold_Types"); st != "H" || h != "s" {
		t.Errorf("refused job: state %s Hold_Types %s, want H and the hook's s", st, h)
	}
	grab := c.Submit("#!/bin/sh\nsleep 60\n", "-N", "grab", "-l", "walltime=60")
	if r := c.Run("qrun", grab); r.Code == 0 || !strings.Contains(r.Stderr, "cannot change Resource_List.ncpus") {
		t.Errorf("qrun of a job whose hook changes its ncpus: %s", r)
	}
	if st := attr(t, c, grab, "job_state"); st != "Q" {
		t.Errorf("job with a refused change is %s, want Q", st)
	}

	ok := c.Submit("#!/bin/sh\nsleep 60\n", "-l", "walltime=60")
	c.MustRun("qrun", ok)
	c.WaitJobState(ok, "R", 30*time.Second)
	if got := attr(t, c, ok, "Resource_List.site"); got != "site_value" {
		t.Errorf("Resource_List.site %q, want what the hook set", got)
	}
	if !strings.Contains(c.ServerLog(), "rj saw "+ok+" requested by root") {
		t.Errorf("the hook's log line is missing:\n%s", c.ServerLog())
	}
	c.MustRun("qdel", ok, grab)

	// The scheduler's starts are judged too, and it says why on the job.
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	bare := c.Submit("#!/bin/sh\nsleep 60\n")
	waitAttr(t, c, bare, "comment", func(v string) bool { return v == "Not Running: PBS Error: rj: no walltime specified" }, 30*time.Second)
	if st := attr(t, c, bare, "job_state"); st != "Q" {
		t.Errorf("refused job is %s, want Q", st)
	}
	timed := c.Submit("#!/bin/sh\nsleep 60\n", "-l", "walltime=60")
	defer func() {
		if t.Failed() {
			t.Logf("server log:\n%s\nsched:\n%s", c.ServerLog(), c.SchedStderr("pbs_sched"))
		}
	}()
	c.WaitJobState(timed, "R", 30*time.Second)
	waitFor(t, "the scheduler named as the requestor", 10*time.Second, func() bool {
		return strings.Contains(c.ServerLog(), "rj saw "+timed+" requested by Scheduler")
	})
}

// A periodic hook runs every freq seconds and sees the server's jobs; a
// jobobit hook runs once per ended job with its exit status and usage,
// and may change nothing.
func TestPeriodicAndJobobitHooks(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, false)
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "create hook tick")
	if r := c.Run("qmgr", "-c", "set hook tick freq = 1"); r.Code == 0 || !strings.Contains(r.Stderr, "hook event must contain at least 'exechost_periodic' or 'periodic'") {
		t.Errorf("freq without a periodic event: %s", r)
	}
	c.MustRun("qmgr", "-c", "set hook tick event = periodic")
	c.MustRun("qmgr", "-c", "set hook tick freq = 1")
	c.MustRun("qmgr", "-c", "import hook tick application/x-python default "+hookFile(t, "tick.py", `import pbs
e = pbs.event()
n = len(list(pbs.server().jobs()))
pbs.logmsg(pbs.LOG_DEBUG, "tick %d sees %d jobs (freq %d, requestor %s)" % (e.type, n, e.freq, e.requestor))
`))
	addHook(t, c, "obit", "jobobit", `import pbs
j = pbs.event().job
pbs.logmsg(pbs.LOG_DEBUG, "obit %s exit %s state %s" % (j.id, j.Exit_status, j.job_state))
if j.Job_Name == "meddle":
    j.comment = "changed by jobobit"
`)
	id := c.Submit("#!/bin/sh\nexit 3\n")
	waitFor(t, "the periodic hook to see the job", 20*time.Second, func() bool {
		return strings.Contains(c.ServerLog(), "tick 32768 sees 1 jobs (freq 1, requestor PBS_Server)")
	})
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 30*time.Second)
	waitFor(t, "the jobobit hook", 20*time.Second, func() bool {
		return strings.Contains(c.ServerLog(), "obit "+id+" exit 3 state 9")
	})
	meddle := c.Submit("#!/bin/sh\ntrue\n", "-N", "meddle")
	c.MustRun("qrun", meddle)
	c.WaitJobState(meddle, "F", 30*time.Second)
	waitFor(t, "the meddling jobobit hook refused", 20*time.Second, func() bool {
		return strings.Contains(c.ServerLog(), "job attribute 'comment' is read-only in a jobobit hook")
	})
	if got := attr(t, c, meddle, "comment"); strings.Contains(got, "changed by jobobit") {
		t.Errorf("a jobobit hook changed the comment: %q", got)
	}
	if strings.Count(c.ServerLog(), "obit "+id+" exit") != 1 {
		t.Errorf("the jobobit hook ran more than once for %s:\n%s", id, c.ServerLog())
	}
}

// The execution host's hooks: the server gives them to the mom; an
// execjob_begin hook refuses a start (the job goes back to its queue with
// the hook's message), an execjob_end hook runs once the job's end is
// recorded, and what exechost_startup and exechost_periodic hooks set of
// the node's resources_available is the node's.
func TestExecHostHooks(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, true)
	c.MustRun("qmgr", "-c", "create resource scratch_gb type=long, flag=h")
	c.MustRun("qmgr", "-c", "create resource startup_mark type=string, flag=h")
	m := c.AddMom("n1", testcluster.MomOptions{})
	addHook(t, c, "begin", "execjob_begin", `import pbs
e = pbs.event()
if e.job.Job_Name == "nobegin":
    e.reject("%s refuses %s" % (pbs.get_local_nodename(), e.job.id))
pbs.logmsg(pbs.LOG_DEBUG, "begin of %s walltime %s" % (e.job.id, e.job.Resource_List["walltime"]))
`)
	addHook(t, c, "end", "execjob_end", `import pbs
pbs.logmsg(pbs.LOG_DEBUG, "end of %s" % pbs.event().job.id)
`)
	addHook(t, c, "startup", "exechost_startup", `import pbs
e = pbs.event()
e.vnode_list[pbs.get_local_nodename()].resources_available["startup_mark"] = "yes"
`)
	addHook(t, c, "scratch", "exechost_periodic", `import pbs
e = pbs.event()
e.vnode_list[pbs.get_local_nodename()].resources_available["scratch_gb"] = 42
`, "freq = 1")
	waitHooks(t, m, 4)
	waitFor(t, "the host hooks' resources on the node", 30*time.Second, func() bool {
		out := c.MustRun("pbsnodes", "n1")
		return strings.Contains(out, "resources_available.scratch_gb = 42") && strings.Contains(out, "resources_available.startup_mark = yes")
	})

	refused := c.Submit("#!/bin/sh\ntrue\n", "-N", "nobegin")
	r := c.Run("qrun", refused)
	if r.Code == 0 || !strings.Contains(r.Stderr, "n1 refuses "+refused) {
		t.Errorf("qrun of a job execjob_begin refuses: %s", r)
	}
	if st := attr(t, c, refused, "job_state"); st != "Q" {
		t.Errorf("refused job is %s, want Q", st)
	}
	id := c.Submit("#!/bin/sh\ntrue\n", "-l", "walltime=00:10:00")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 30*time.Second)
	waitFor(t, "the execjob_end hook", 20*time.Second, func() bool { return strings.Contains(m.Log(), "end of "+id) })
	if !strings.Contains(m.Log(), "begin of "+id+" walltime 00:10:00") {
		t.Errorf("the execjob_begin hook did not see the job:\n%s", m.Log())
	}
	if strings.Contains(m.Log(), "end of "+refused) {
		t.Errorf("execjob_end ran for a job that never began")
	}

	// Deleting the hooks takes them off the mom.
	for _, h := range []string{"begin", "end", "startup", "scratch"} {
		c.MustRun("qmgr", "-c", "delete hook "+h)
	}
	waitHooks(t, m, 0)
	again := c.Submit("#!/bin/sh\ntrue\n", "-N", "nobegin")
	c.MustRun("qrun", again)
	c.WaitJobState(again, "F", 30*time.Second)
}

// execjob_prologue hooks judge a start after execjob_begin's, and
// execjob_epilogue hooks run over the ended job before its end is
// reported; a pbsuser hook runs as the job's owner.
func TestPrologueEpilogueHooks(t *testing.T) {
	t.Parallel()
	needPython(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a job as another user")
	}
	c := hookCluster(t, true)
	m := c.AddMom("n1", testcluster.MomOptions{})
	addHook(t, c, "pro", "execjob_prologue", `import pbs
e = pbs.event()
if e.job.Job_Name == "noprologue":
    e.reject("prologue refuses " + e.job.id)
`)
	addHook(t, c, "epi", "execjob_epilogue", `import pbs, os
e = pbs.event()
pbs.logmsg(pbs.LOG_DEBUG, "epilogue of %s uid %d exit %s" % (e.job.id, os.getuid(), e.job.Exit_status))
`, "user = pbsuser")
	if got := c.MustRun("qmgr", "-c", "list hook epi user"); !strings.Contains(got, "user = pbsuser") {
		t.Errorf("list hook epi user: %q", got)
	}
	waitHooks(t, m, 2)

	refused := c.Submit("#!/bin/sh\ntrue\n", "-N", "noprologue")
	if r := c.Run("qrun", refused); r.Code == 0 || !strings.Contains(r.Stderr, "prologue refuses "+refused) {
		t.Errorf("qrun of a job the prologue hook refuses: %s", r)
	}
	out := filterDir(t) // every user can reach it
	os.Chmod(out, 0o777)
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	r := c.RunAs(nobody, "#!/bin/sh\nexit 7\n", "qsub", "-j", "oe", "-o", filepath.Join(out, "o"))
	if r.Code != 0 {
		t.Fatalf("qsub as nobody: %s", r)
	}
	id := strings.TrimSpace(r.Stdout)
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 30*time.Second)
	if !strings.Contains(m.Log(), "epilogue of "+id+" uid 65534 exit 7") {
		t.Errorf("the epilogue hook's line (as nobody, with the exit status) is missing:\n%s", m.Log())
	}
	if got := attr(t, c, id, "Exit_status"); got != "7" {
		t.Errorf("Exit_status %q", got)
	}
}

// resvsub and modifyresv hooks judge pbs_rsub and pbs_ralter: a hook
// refuses a reservation longer than it allows, names one that has no
// name, and sees the reservation as it is when it is altered.
func TestResvHooks(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, false)
	addHook(t, c, "rsub", "resvsub,modifyresv", `import pbs
e = pbs.event()
r = e.resv
if e.type == pbs.MODIFYRESV:
    pbs.logmsg(pbs.LOG_DEBUG, "altering %s named %s to %d s" % (e.resv_o.resvid, e.resv_o.Reserve_Name, r.reserve_duration))
if r.reserve_duration is not None and r.reserve_duration > 7200:
    e.reject("reservations of more than 2 hours are refused")
if e.type == pbs.RESVSUB and r.Reserve_Name is None:
    r.Reserve_Name = "named_by_hook"
`)
	start := rsubTime(time.Now().Add(time.Hour))
	r := c.Run("pbs_rsub", "-R", start, "-D", "03:00:00", "-l", "select=1:ncpus=1")
	if r.Code == 0 || r.Stderr != "pbs_rsub: reservations of more than 2 hours are refused\n" {
		t.Errorf("pbs_rsub past the hook's limit: %s", r)
	}
	id, _ := rsub(t, c, "-R", start, "-D", "01:00:00", "-l", "select=1:ncpus=1")
	if got := resvAttr(c, id, "Reserve_Name"); got != "named_by_hook" {
		t.Errorf("Reserve_Name %q, want the hook's", got)
	}
	if r := c.Run("pbs_ralter", "-D", "05:00:00", id); r.Code == 0 || !strings.Contains(r.Stderr, "reservations of more than 2 hours are refused") {
		t.Errorf("pbs_ralter past the hook's limit: %s", r)
	}
	if !strings.Contains(c.ServerLog(), "altering "+id+" named named_by_hook to 18000 s") {
		t.Errorf("the modifyresv hook did not see the reservation as it is:\n%s", c.ServerLog())
	}
}

// A management hook sees each qmgr request after the server answered
// it, with its outcome; a modifyvnode hook sees a node's change of state,
// as it was and as it is.
func TestManagementAndModifyvnodeHooks(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, false)
	c.AddMom("n1", testcluster.MomOptions{})
	addHook(t, c, "mgmt", "management", `import pbs
m = pbs.event().management
attrs = ",".join("%s=%s" % (a.name, a.value) for a in m.attribs)
pbs.logmsg(pbs.LOG_DEBUG, "mgmt cmd %d obj %d name %s code %d attrs %s" % (m.cmd, m.objtype, m.objname, m.reply_code, attrs))
`)
	addHook(t, c, "vn", "modifyvnode", `import pbs
e = pbs.event()
was = "offline" if e.vnode_o.state & pbs.ND_STATE_OFFLINE else "not offline"
now = "offline" if e.vnode.state & pbs.ND_STATE_OFFLINE else "not offline"
pbs.logmsg(pbs.LOG_DEBUG, "vnode %s was %s, is %s" % (e.vnode.name, was, now))
`)
	c.MustRun("qmgr", "-c", "set queue workq max_running = 5")
	c.Run("qmgr", "-c", "set queue nosuch enabled = true")
	waitFor(t, "the management hook's lines", 20*time.Second, func() bool {
		log := c.ServerLog()
		return strings.Contains(log, "mgmt cmd 2 obj 1 name workq code 0 attrs max_running=5") &&
			strings.Contains(log, "mgmt cmd 2 obj 1 name nosuch code 15018 attrs enabled=true")
	})
	defer func() {
		if t.Failed() {
			t.Log(c.ServerLog())
		}
	}()
	// The hook's loop notes the node at its first look: a change made
	// before it is not one it sees, so the change is made again until it
	// is seen, then undone.
	saw := func(line string) bool {
		ok, _ := testcluster.Poll(3*time.Second, func() (bool, string) { return strings.Contains(c.ServerLog(), line), "" })
		return ok
	}
	waitFor(t, "the modifyvnode hook to see the node go offline and back", 30*time.Second, func() bool {
		c.MustRun("qmgr", "-c", "set node n1 state = offline")
		seen := saw("vnode n1 was not offline, is offline")
		c.MustRun("qmgr", "-c", "set node n1 state = free")
		back := saw("vnode n1 was offline, is not offline")
		return seen && back
	})
}

// resv_confirm, resv_begin and resv_end hooks see a reservation confirmed
// by the scheduler, its period beginning and its end.
func TestResvLifeHooks(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := resvCluster(t)
	addHook(t, c, "rlife", "resv_confirm,resv_begin,resv_end", `import pbs
e = pbs.event()
names = {pbs.RESV_CONFIRM: "confirm", pbs.RESV_BEGIN: "begin", pbs.RESV_END: "end"}
pbs.logmsg(pbs.LOG_DEBUG, "rlife %s of %s" % (names[e.type], e.resv.resvid))
`)
	start := time.Now().Add(4 * time.Second).Truncate(time.Second).Add(time.Second)
	id, _ := rsub(t, c, "-R", rsubTime(start), "-D", "00:00:05", "-l", "select=1:ncpus=1")
	for _, what := range []string{"confirm", "begin", "end"} {
		waitFor(t, "the reservation's "+what+" hook", 40*time.Second, func() bool {
			return strings.Contains(c.ServerLog(), "rlife "+what+" of "+id)
		})
	}
	log := c.ServerLog()
	if i, j, k := strings.Index(log, "rlife confirm"), strings.Index(log, "rlife begin"), strings.Index(log, "rlife end"); !(i < j && j < k) {
		t.Errorf("the hooks ran out of order:\n%s", log)
	}
}

// fail_action: an execjob_begin hook that raises takes its node offline
// (offline_vnodes, with OpenPBS's comment); an exechost_startup hook that
// succeeds when the mom starts again brings it back
// (clear_vnodes_upon_recovery).
func TestHookFailAction(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, true)
	m := c.AddMom("n1", testcluster.MomOptions{})
	addHook(t, c, "fragile", "execjob_begin", `import pbs
if pbs.event().job.Job_Name == "boom":
    raise RuntimeError("the begin hook broke")
`, "fail_action = offline_vnodes")
	addHook(t, c, "recover", "exechost_startup", `import pbs
pbs.logmsg(pbs.LOG_DEBUG, "startup on " + pbs.get_local_nodename())
`, "fail_action = clear_vnodes_upon_recovery")
	if r := c.Run("qmgr", "-c", "set hook recover fail_action += offline_vnodes"); r.Code != 0 {
		t.Errorf("offline_vnodes on an exechost_startup hook: %s", r)
	}
	if r := c.Run("qmgr", "-c", "set hook fragile fail_action = clear_vnodes_upon_recovery"); r.Code == 0 || !strings.Contains(r.Stderr, "exechost_startup") {
		t.Errorf("clear_vnodes_upon_recovery without exechost_startup: %s", r)
	}
	waitHooks(t, m, 2)
	id := c.Submit("#!/bin/sh\ntrue\n", "-N", "boom")
	if r := c.Run("qrun", id); r.Code == 0 || !strings.Contains(r.Stderr, "request rejected as filter hook 'fragile' encountered an exception. Please inform Admin") {
		t.Errorf("qrun of a job whose begin hook raises: %s", r)
	}
	c.WaitNodeState("n1", "offline", 20*time.Second)
	if out := c.MustRun("pbsnodes", "n1"); !strings.Contains(out, "comment = offlined by hook 'fragile' due to hook error") {
		t.Errorf("the offline node's comment:\n%s", out)
	}
	// The verdict outlives the mom; the startup hook's success ends it.
	m.Kill(syscall.SIGTERM)
	m.Start()
	c.WaitNodeState("n1", "free", 30*time.Second)
	if !strings.Contains(m.Log(), `node health set by a hook's fail_action: hook=recover health=""`) {
		t.Errorf("the node came back without the startup hook's recovery:\n%s", m.Log())
	}
	c.MustRun("qdel", id)
}

// An execjob_launch hook sets the job's environment before its shell
// starts; a change of the program is refused, naming the hook.
func TestLaunchHook(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, true)
	m := c.AddMom("n1", testcluster.MomOptions{})
	addHook(t, c, "launch", "execjob_launch", `import pbs
e = pbs.event()
e.env["FROM_LAUNCH"] = "set by " + e.hook_name
if "PBS_O_SHELL" in e.env:
    del e.env["PBS_O_SHELL"]
if e.job.Job_Name == "wrap":
    e.progname = "/usr/bin/env"
`)
	waitHooks(t, m, 1)
	out := filterDir(t)
	os.Chmod(out, 0o777)
	id := c.Submit("#!/bin/sh\necho \"launch=$FROM_LAUNCH shell=${PBS_O_SHELL-unset}\" > "+filepath.Join(out, "env")+"\n", "-v", "PBS_O_SHELL=/bin/sh")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 30*time.Second)
	if got := readFile(t, filepath.Join(out, "env")); got != "launch=set by launch shell=unset\n" {
		t.Errorf("the job's environment: %q", got)
	}
	wrap := c.Submit("#!/bin/sh\ntrue\n", "-N", "wrap")
	if r := c.Run("qrun", wrap); r.Code == 0 || !strings.Contains(r.Stderr, "'launch': only the environment is taken from an execjob_launch hook here, not a change of the program or its arguments") {
		t.Errorf("qrun of a job whose launch hook changes the program: %s", r)
	}
}

// An execjob_postsuspend hook runs once a job is suspended; an
// execjob_preresume hook may keep it suspended.
func TestSuspendResumeHooks(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, true)
	m := c.AddMom("n1", testcluster.MomOptions{})
	addHook(t, c, "susp", "execjob_postsuspend,execjob_preresume", `import pbs
e = pbs.event()
if e.type == pbs.EXECJOB_POSTSUSPEND:
    pbs.logmsg(pbs.LOG_DEBUG, "postsuspend of %s state %s" % (e.job.id, e.job.job_state))
elif e.job.Job_Name == "stay":
    e.reject("%s stays suspended" % e.job.id)
`)
	waitHooks(t, m, 1)
	for _, name := range []string{"stay", "go"} {
		id := c.Submit("#!/bin/sh\nsleep 120\n", "-N", name)
		c.MustRun("qrun", id)
		c.WaitJobState(id, "R", 30*time.Second)
		c.MustRun("qsig", "-s", "suspend", id)
		c.WaitJobState(id, "S", 30*time.Second)
		waitFor(t, "the postsuspend hook", 20*time.Second, func() bool {
			return strings.Contains(m.Log(), "postsuspend of "+id+" state 400")
		})
		r := c.Run("qsig", "-s", "resume", id)
		if name == "stay" {
			if r.Code == 0 || !strings.Contains(r.Stderr, id+" stays suspended") {
				t.Errorf("resume the preresume hook refuses: %s", r)
			}
			if st := attr(t, c, id, "job_state"); st != "S" {
				t.Errorf("refused resume left the job %s, want S", st)
			}
		} else if r.Code != 0 {
			t.Errorf("resume: %s", r)
		} else {
			c.WaitJobState(id, "R", 30*time.Second)
		}
		c.MustRun("qdel", id)
	}
}

// On a multi-node job's sisters: execjob_begin judges the join (a
// rejection refuses the start), execjob_abort runs on a sister whose join
// was given up, execjob_end on every node at the end.
func TestSisterHooks(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, true)
	moms := map[string]*testcluster.Mom{}
	for _, n := range []string{"n1", "n2", "n3"} {
		moms[n] = c.AddMom(n, testcluster.MomOptions{})
	}
	addHook(t, c, "sis", "execjob_begin,execjob_abort,execjob_end", `import pbs
e = pbs.event()
here = pbs.get_local_nodename()
names = {pbs.EXECJOB_BEGIN: "begin", pbs.EXECJOB_ABORT: "abort", pbs.EXECJOB_END: "end"}
pbs.logmsg(pbs.LOG_DEBUG, "%s of %s on %s" % (names[e.type], e.job.id, here))
if e.type == pbs.EXECJOB_BEGIN and e.job.Job_Name == "nosister" and here == "n3":
    e.reject("n3 refuses " + e.job.id)
`)
	for _, m := range moms {
		waitHooks(t, m, 1)
	}
	refused := c.Submit("#!/bin/sh\ntrue\n", "-N", "nosister", "-l", "select=3:ncpus=1", "-l", "place=scatter")
	if r := c.Run("qrun", "-H", "n1+n2+n3", refused); r.Code == 0 || !strings.Contains(r.Stderr, "n3 refuses "+refused) {
		t.Errorf("qrun of a job a sister's begin hook refuses: %s", r)
	}
	waitFor(t, "n2's abort hook", 20*time.Second, func() bool { return strings.Contains(moms["n2"].Log(), "abort of "+refused+" on n2") })
	id := c.Submit("#!/bin/sh\ntrue\n", "-l", "select=3:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", "-H", "n1+n2+n3", id)
	c.WaitJobState(id, "F", 30*time.Second)
	for n, m := range moms {
		waitFor(t, "the end hook on "+n, 20*time.Second, func() bool {
			return strings.Contains(m.Log(), "begin of "+id+" on "+n) && strings.Contains(m.Log(), "end of "+id+" on "+n)
		})
	}
}

// An execjob_preterm hook runs on the job's mom before a qdel is
// recorded: its rejection keeps the job running; qdel -W force does not
// ask it.
func TestPretermHook(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := hookCluster(t, true)
	m := c.AddMom("n1", testcluster.MomOptions{})
	addHook(t, c, "pre", "execjob_preterm", `import pbs
e = pbs.event()
pbs.logmsg(pbs.LOG_DEBUG, "preterm of %s" % e.job.id)
if e.job.Job_Name == "keep":
    e.reject("%s keeps running" % e.job.id)
`)
	waitHooks(t, m, 1)
	keep := c.Submit("#!/bin/sh\nsleep 120\n", "-N", "keep")
	c.MustRun("qrun", keep)
	c.WaitJobState(keep, "R", 30*time.Second)
	if r := c.Run("qdel", keep); r.Code == 0 || !strings.Contains(r.Stderr, keep+" keeps running") {
		t.Errorf("qdel the preterm hook refuses: %s", r)
	}
	if st := attr(t, c, keep, "job_state"); st != "R" {
		t.Errorf("the refused delete left the job %s, want R", st)
	}
	c.MustRun("qdel", "-W", "force", keep)
	c.WaitJobState(keep, "F", 30*time.Second)

	gone := c.Submit("#!/bin/sh\nsleep 120\n")
	c.MustRun("qrun", gone)
	c.WaitJobState(gone, "R", 30*time.Second)
	c.MustRun("qdel", gone)
	c.WaitJobState(gone, "F", 30*time.Second)
	if !strings.Contains(m.Log(), "preterm of "+gone) {
		t.Errorf("the preterm hook did not run before the delete:\n%s", m.Log())
	}
}

// An execjob_resize hook runs on the job's first mom once its allocation
// changed (here: pbs_release_nodes gave a node back), seeing the new one.
func TestResizeHook(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := elasticCluster(t, 2, "")
	m := c.Mom("n1")
	addHook(t, c, "rs", "execjob_resize", `import pbs
e = pbs.event()
pbs.logmsg(pbs.LOG_DEBUG, "resize of %s to %s" % (e.job.id, e.job.exec_vnode))
`)
	waitHooks(t, m, 1)
	waitHooks(t, c.Mom("n2"), 1)
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	id := c.Submit("#!/bin/sh\npbs_release_nodes n2\nsleep 60\n", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", "-H", "n1+n2", id)
	waitFor(t, "the resize hook", 30*time.Second, func() bool {
		return strings.Contains(m.Log(), "resize of "+id+" to (n1:ncpus=1)")
	})
	c.MustRun("qdel", id)
}

// What hooks set is what the scheduler schedules with: a queuejob hook's
// select, and a custom resource an exechost_periodic hook reports.
func TestHooksSeenByTheScheduler(t *testing.T) {
	t.Parallel()
	needPython(t)
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 1")
	c.MustRun("qmgr", "-c", "create resource scratch_gb type=long, flag=nh")
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	addHook(t, c, "widen", "queuejob", `import pbs
e = pbs.event()
if e.job.Job_Name == "wide":
    e.job.Resource_List["select"] = pbs.select("1:ncpus=4")
`)
	addHook(t, c, "scratch", "exechost_periodic", `import pbs
e = pbs.event()
e.vnode_list[pbs.get_local_nodename()].resources_available["scratch_gb"] = 42
`, "freq = 1")
	waitFor(t, "the node's scratch from the hook", 30*time.Second, func() bool {
		return strings.Contains(c.MustRun("pbsnodes", "n1"), "resources_available.scratch_gb = 42")
	})
	c.StartScheduler("pbs_sched")
	wide := c.Submit("#!/bin/sh\nsleep 60\n", "-N", "wide")
	if got := attr(t, c, wide, "Resource_List.select"); got != "1:ncpus=4" {
		t.Errorf("select %q, want the hook's", got)
	}
	fits := c.Submit("#!/bin/sh\nsleep 60\n", "-l", "select=1:ncpus=1:scratch_gb=10")
	c.WaitJobState(fits, "R", 30*time.Second)
	toobig := c.Submit("#!/bin/sh\nsleep 60\n", "-l", "select=1:ncpus=1:scratch_gb=100")
	waitAttr(t, c, toobig, "comment", contains("scratch_gb"), 30*time.Second)
	waitAttr(t, c, wide, "comment", contains("ncpus"), 30*time.Second)
	for _, id := range []string{wide, toobig} {
		if st := attr(t, c, id, "job_state"); st != "Q" {
			t.Errorf("%s is %s, want Q", id, st)
		}
	}
}
