package integration

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// Attribute names in any case, as OpenPBS takes them (issue 30): qmgr,
// qsub -W, qalter -W and a submission filter's rewrite may write a name
// in any case; what is stored and printed is the canonical spelling.
func TestAttributeNamesAnyCase(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	for _, line := range []string{"set queue workq priority = 50", "set server Scheduling = False", "set queue workq MAX_RUNNING = 5", "set server QUERY_OTHER_JOBS = True"} {
		if r := c.Run("qmgr", "-c", line); r.Code != 0 {
			t.Errorf("qmgr -c %q: %s", line, r)
		}
	}
	out := c.MustRun("qmgr", "-c", "list queue workq")
	for _, want := range []string{"Priority = 50\n", "max_running = 5\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("list queue workq lacks %q:\n%s", want, out)
		}
	}
	if out := c.MustRun("qmgr", "-c", "print server"); !strings.Contains(out, "set server scheduling = False\n") || strings.Contains(out, "Scheduling") {
		t.Errorf("print server does not write the canonical spelling:\n%s", out)
	}
	id := c.Submit("#!/bin/sh\n", "-W", "account_name=p1")
	if got := attr(t, c, id, "Account_Name"); got != "p1" {
		t.Errorf("qsub -W account_name=p1: Account_Name %q", got)
	}
	c.MustRun("qalter", "-W", "ACCOUNT_NAME=p2", id)
	if got := attr(t, c, id, "Account_Name"); got != "p2" {
		t.Errorf("qalter -W ACCOUNT_NAME=p2: Account_Name %q", got)
	}
	if r := c.Run("qmgr", "-c", "set queue workq no_such_attr = 1"); r.Code == 0 {
		t.Errorf("an unknown attribute was taken: %s", r)
	}

	// A filter that writes the name in another case sets the attribute.
	dir := filterDir(t)
	lower := script(t, dir, "lower", `sed -i '0,/^        "[^"]*":{$/s//&\n            "account_name":"viafilter",/' "$1"`+"\nexit 1\n")
	c.MustRun("qmgr", "-c", "set server submission_filters = "+lower)
	id = c.Submit("#!/bin/sh\n")
	if got := attr(t, c, id, "Account_Name"); got != "viafilter" {
		t.Errorf("a filter's account_name: Account_Name %q\n%s", got, c.ServerLog())
	}
}

// A filter's rewrite outside "Jobs" is refused, naming the key and the
// filter (issue 30): it was accepted with the job unchanged.
func TestFilterRewriteOutsideJobsRefused(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	dir := filterDir(t)
	top := script(t, dir, "top", `sed -i '1s/^{$/{\n    "Account_Name":"top",/' "$1"`+"\nexit 1\n")
	c.MustRun("qmgr", "-c", "set server submission_filters = "+top)
	r := c.RunStdin("#!/bin/sh\n", "qsub")
	if r.Code == 0 || !strings.Contains(r.Stderr, top) || !strings.Contains(r.Stderr, "Account_Name is written at the top of the job file") {
		t.Errorf("qsub through a filter writing Account_Name at the top: %s", r)
	}
	if ids := strings.Fields(c.MustRun("qselect")); len(ids) != 0 {
		t.Errorf("jobs accepted: %v", ids)
	}
}

// qstat -f -F json of several jobs is one JSON document (issue 30; PTL
// loads it whole), also with the ids given one by one.
func TestQstatJSONSeveralJobs(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	a, b := c.Submit("#!/bin/sh\n"), c.Submit("#!/bin/sh\n", "-v", `NOTE=say "hi"\there`)
	for _, args := range [][]string{{"-f", "-F", "json"}, {"-f", "-F", "json", a, b}, {"-F", "json", "-f", a, b}} {
		out := c.MustRun("qstat", args...)
		var doc struct {
			Jobs map[string]map[string]any
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Errorf("qstat %v: not one JSON document: %v\n%s", args, err, out)
			continue
		}
		if len(doc.Jobs) != 2 {
			t.Errorf("qstat %v: %d jobs, want 2", args, len(doc.Jobs))
		}
	}
}

// qhold of a running job is taken, as OpenPBS takes it (issue 30): the
// job runs on with the hold in Hold_Types, and is held once requeued.
func TestQholdRunningJob(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	id := c.Submit("#!/bin/sh\nsleep 300\n")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "R", 20*time.Second)
	if r := c.Run("qhold", id); r.Code != 0 {
		t.Fatalf("qhold of a running job: %s", r)
	}
	if st, h := attr(t, c, id, "job_state"), attr(t, c, id, "Hold_Types"); st != "R" || h != "u" {
		t.Errorf("after qhold: state %s Hold_Types %q, want R and u", st, h)
	}
	c.MustRun("qrerun", id)
	c.WaitJobState(id, "H", 30*time.Second)
	c.MustRun("qrls", id)
	if st := attr(t, c, id, "job_state"); st != "Q" {
		t.Errorf("after qrls: %s, want Q", st)
	}
	c.MustRun("qdel", id)
}

// One pbs_server and one pbs_mom per PBS_HOME, as OpenPBS's server.lock
// and mom.lock keep it (issue 30): a second one refuses to start, naming
// the first's pid; the lock holds the pid.
func TestDaemonLockFiles(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	m := c.AddMom("n1", testcluster.MomOptions{})
	for _, tt := range []struct {
		daemon, lock string
		env          []string
		pid          int
	}{
		{"pbs_server", filepath.Join(c.Home, "server_priv", "server.lock"), c.Env(), c.ServerPid()},
		{"pbs_mom", filepath.Join(m.Home, "mom_priv", "mom.lock"), m.Env(), m.Pid()},
	} {
		if got := strings.TrimSpace(readFile(t, tt.lock)); got != strconv.Itoa(tt.pid) {
			t.Errorf("%s holds %q, want the pid %d", tt.lock, got, tt.pid)
		}
		cmd := exec.Command(filepath.Join(c.Bin, tt.daemon))
		cmd.Env = tt.env
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), fmt.Sprintf("another %s (pid %d) runs on this PBS_HOME", tt.daemon, tt.pid)) {
			t.Errorf("a second %s: %v\n%s", tt.daemon, err, out)
		}
	}
	c.MustRun("qstat", "-B") // the first server still serves
}

// A qrun that does not start its job starts a scheduling cycle, as
// OpenPBS's does (issue 30): the periodic cycle is ten minutes off and
// nothing else happens, yet a cycle follows the refused qrun.
func TestFailedQrunStartsCycle(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 1")
	c.StartScheduler("pbs_sched")
	busy := c.Submit("#!/bin/sh\nsleep 300\n")
	c.WaitJobState(busy, "R", 30*time.Second)
	waiting := c.Submit("#!/bin/sh\n")
	// The cycle its submission started has said why it waits.
	waitAttr(t, c, waiting, "comment", func(v string) bool { return strings.HasPrefix(v, "Not Running") }, 30*time.Second)
	before := c.SchedCycles()
	if r := c.Run("qrun", waiting); r.Code == 0 {
		t.Fatalf("qrun of a job with no free cpu started it: %s", r)
	}
	testcluster.WaitFor(t, "a cycle after the refused qrun", 20*time.Second, func() (bool, string) {
		return c.SchedCycles() > before, ""
	})
	c.MustRun("qdel", busy, waiting)
}

// qmgr lines OpenPBS takes and admins' scripts write (issue 30): delete
// node @default deletes every node (none while one runs a job), the
// default queue may be deleted (the server then has none), and
// next_job_number moves forward (never back) and may be unset.
func TestQmgrOpenPBSObjects(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", "create node a")
	c.MustRun("qmgr", "-c", "create node b")
	c.MustRun("qmgr", "-c", "delete node @default")
	if out := c.MustRun("qmgr", "-c", "list node @default"); strings.Contains(out, "Node ") {
		t.Errorf("nodes left after delete node @default:\n%s", out)
	}
	c.MustRun("qmgr", "-c", "set server next_job_number = 100")
	if id := c.Submit("#!/bin/sh\n"); !strings.HasPrefix(id, "100.") {
		t.Errorf("the job after next_job_number = 100 is %s", id)
	}
	if r := c.Run("qmgr", "-c", "set server next_job_number = 5"); r.Code == 0 || !strings.Contains(r.Stderr, "never reused") {
		t.Errorf("next_job_number moved back: %s", r)
	}
	c.MustRun("qmgr", "-c", "unset server next_job_number")
	if id := c.Submit("#!/bin/sh\n"); !strings.HasPrefix(id, "101.") {
		t.Errorf("the job after unset next_job_number is %s", id)
	}
	c.MustRun("qdel", "100", "101")
	c.MustRun("qmgr", "-c", "create queue other queue_type = execution, enabled = true, started = true")
	if r := c.Run("qmgr", "-c", "delete queue workq"); r.Code != 0 {
		t.Fatalf("delete queue workq (the default queue): %s", r)
	}
	if r := c.RunStdin("#!/bin/sh\n", "qsub"); r.Code == 0 {
		t.Errorf("qsub without -q and no default queue: %s", r)
	}
	if r := c.RunStdin("#!/bin/sh\n", "qsub", "-q", "other"); r.Code != 0 {
		t.Errorf("qsub -q other: %s", r)
	}
}

// A running job deleted ends in substate 91 (OpenPBS's TERMINATED), not
// 92 as if it had run to its end (issue 30).
func TestDeletedRunningJobSubstate(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", "set server job_history_enable = True")
	id := c.Submit("#!/bin/sh\nsleep 300\n")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "R", 20*time.Second)
	c.MustRun("qdel", id)
	c.WaitJobState(id, "F", 30*time.Second)
	if sub := attr(t, c, id, "substate"); sub != "91" {
		t.Errorf("substate %s of a deleted running job, want 91", sub)
	}
}

// The server's default_qsub_arguments, as OpenPBS's (issue 30): every
// qsub gets them below its script's directives and its command line; a
// value qsub could not take is refused when it is set.
func TestDefaultQsubArguments(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", `set server default_qsub_arguments = "-r n -l walltime=00:10:00 -A acct"`)
	plain := c.Submit("#!/bin/sh\n")
	if r, w, a := attr(t, c, plain, "Rerunable"), attr(t, c, plain, "Resource_List.walltime"), attr(t, c, plain, "Account_Name"); r != "False" || w != "00:10:00" || a != "acct" {
		t.Errorf("with the defaults: Rerunable %s walltime %s Account_Name %s", r, w, a)
	}
	own := c.Submit("#!/bin/sh\n#PBS -A mine\n", "-l", "walltime=01:00:00")
	if w, a := attr(t, c, own, "Resource_List.walltime"), attr(t, c, own, "Account_Name"); w != "01:00:00" || a != "mine" {
		t.Errorf("the job's own: walltime %s Account_Name %s", w, a)
	}
	for _, bad := range []string{`set server default_qsub_arguments = "-I"`, `set server default_qsub_arguments = "-q other"`, `set server default_qsub_arguments = "-r maybe"`} {
		if r := c.Run("qmgr", "-c", bad); r.Code == 0 {
			t.Errorf("qmgr -c %q was taken", bad)
		}
	}
}

// pbsnodes shows when a node last ran a job, OpenPBS's last_used_time
// (issue 30): none before, the end of the job after.
func TestNodeLastUsedTime(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	if out := c.MustRun("pbsnodes", "-av"); strings.Contains(out, "last_used_time") {
		t.Errorf("last_used_time before any job:\n%s", out)
	}
	id := c.Submit("#!/bin/sh\ntrue\n")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 30*time.Second)
	out := c.MustRun("pbsnodes", "-av")
	if !strings.Contains(out, "last_used_time = ") {
		t.Errorf("no last_used_time after a job ended on the node:\n%s", out)
	}
	// A comment with an escaped newline (OpenPBS's PTL sets "hi\nha") is
	// taken as written and pbsnodes -F json stays one valid document.
	c.MustRun("qmgr", "-c", `set node n1 comment = "hi\nha"`)
	var doc struct {
		Nodes map[string]struct {
			Comment string `json:"comment"`
		} `json:"nodes"`
	}
	js := c.MustRun("pbsnodes", "-av", "-F", "json")
	if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.Nodes["n1"].Comment != `hi\nha` {
		t.Errorf("pbsnodes -F json with comment hi\\nha: %v, comment %q\n%s", err, doc.Nodes["n1"].Comment, js)
	}
}
