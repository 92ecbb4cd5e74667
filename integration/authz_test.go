package integration

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// The authorisation matrix: testdata/authz_matrix.tsv lists, for each role
// (root, manager, operator, a job's owner, another user, a user of the
// job's group), request and setting, what OpenPBS does; TestAuthzMatrix
// runs every row for real as a Unix user it creates. The file's header
// comment explains the columns.

const authzMatrixFile = "testdata/authz_matrix.tsv"

var authzColumns = []string{"name", "request", "role", "relation", "job", "setting", "expect", "stderr", "known_gap"}

// authzCodes are the refusals the table may name.
var authzCodes = map[string]proto.Code{
	"PBSE_PERM":      proto.PBSE_PERM,
	"PBSE_ATTRRO":    proto.PBSE_ATTRRO,
	"PBSE_BADUSER":   proto.PBSE_BADUSER,
	"PBSE_HISTJOBID": proto.PBSE_HISTJOBID,
}

// authzExitIsCode are the commands that exit with the PBSE code modulo 256
// in OpenPBS (pbs_errno as the exit status), so a row's code can be checked
// from the exit status as well as from the message.
var authzExitIsCode = map[string]bool{
	"qstat": true, "qdel": true, "qalter": true, "qhold": true, "qrls": true, "qrun": true, "qsig": true,
}

var (
	authzRoles     = []string{"root", "manager", "operator", "owner", "other", "groupmate"}
	authzRelations = []string{"self", "other", "group", "-"}
	authzJobs      = []string{"none", "queued", "held_u", "held_o", "held_s", "running", "finished"}
	authzSettings  = []string{"-", "query_other_jobs=False", "acl_roots=unset", "queue_acl_users=owner", "queue_acl_groups=owner_group", "server_acl_users=owner"}
)

const (
	authzQueue = "azq" // the queue qsub rows submit to, where the ACL settings apply
	authzNode  = "azn" // a node without a mom, for pbsnodes -o
	authzMom   = "n1"  // the node jobs run on
)

// authzScript runs until deleted and notes in $AZ_MARK_DIR/<job id>.mark
// that it is ready (its traps are set), then the signals USR1 and USR2 it
// gets, in the order received.
const authzScript = `#!/bin/sh
trap 'echo USR1 >> "$AZ_MARK_DIR/$PBS_JOBID.mark"' USR1
trap 'echo USR2 >> "$AZ_MARK_DIR/$PBS_JOBID.mark"' USR2
echo READY >> "$AZ_MARK_DIR/$PBS_JOBID.mark"
while :; do sleep 1; done
`

type authzRow struct {
	line     int
	name     string
	request  []string
	role     string
	relation string
	job      string
	setting  string
	expect   string
	stderr   string
	gap      string
}

type authzUser struct {
	name string
	cred testcluster.Cred
}

// authzEnv is the one cluster and the users every row runs against.
type authzEnv struct {
	c          *testcluster.Cluster
	users      map[string]authzUser // by role, root excluded
	ownerGroup string
	spool      string // where jobs write output and signal marks
	momStale   bool   // the server restarted: the mom may not have reported yet
}

func TestAuthzMatrix(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostUsers)
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test creates Unix users and runs commands as them")
	}
	for _, tool := range []string{"useradd", "groupadd", "userdel", "groupdel"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s to create and remove the test's users: %v", tool, err)
		}
	}
	rows := readAuthzMatrix(t)
	start := time.Now()
	// Users first: their cleanup then runs after the cluster's (jobs gone).
	e := &authzEnv{}
	e.createUsers(t)
	e.startCluster(t)
	t.Logf("set up in %v", time.Since(start).Round(time.Millisecond))

	gaps := 0
	for _, r := range rows {
		if r.gap != "-" {
			gaps++
		}
		t.Run(r.name, func(t *testing.T) { e.runRow(t, r) })
	}
	t.Logf("%d rows (%d known gaps) in %v", len(rows), gaps, time.Since(start).Round(time.Millisecond))
}

// readAuthzMatrix parses and checks the table.
func readAuthzMatrix(t *testing.T) []authzRow {
	t.Helper()
	f, err := os.Open(authzMatrixFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []authzRow
	seen := map[string]int{}
	header := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if !header {
			if !slices.Equal(fields, authzColumns) {
				t.Fatalf("%s:%d: header %q, want %q", authzMatrixFile, n, fields, authzColumns)
			}
			header = true
			continue
		}
		if len(fields) != len(authzColumns) {
			t.Fatalf("%s:%d: %d fields, want %d (tab-separated)", authzMatrixFile, n, len(fields), len(authzColumns))
		}
		for i, f := range fields {
			if strings.TrimSpace(f) != f || f == "" {
				t.Fatalf("%s:%d: column %s is empty or has blanks around it: %q", authzMatrixFile, n, authzColumns[i], f)
			}
		}
		argv, err := splitAuthzCommand(fields[1])
		if err != nil || len(argv) == 0 {
			t.Fatalf("%s:%d: request %q: %v", authzMatrixFile, n, fields[1], err)
		}
		r := authzRow{line: n, name: fields[0], request: argv, role: fields[2], relation: fields[3], job: fields[4],
			setting: fields[5], expect: fields[6], stderr: fields[7], gap: fields[8]}
		if prev, dup := seen[r.name]; dup {
			t.Fatalf("%s:%d: row %s already on line %d", authzMatrixFile, n, r.name, prev)
		}
		seen[r.name] = n
		if err := r.check(); err != nil {
			t.Fatalf("%s:%d: row %s: %v", authzMatrixFile, n, r.name, err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no rows", authzMatrixFile)
	}
	return rows
}

// check validates a row's columns against each other.
func (r authzRow) check() error {
	for _, c := range []struct {
		col, v  string
		allowed []string
	}{{"role", r.role, authzRoles}, {"relation", r.relation, authzRelations}, {"job", r.job, authzJobs}, {"setting", r.setting, authzSettings}} {
		if !slices.Contains(c.allowed, c.v) {
			return fmt.Errorf("%s %q (want one of %s)", c.col, c.v, strings.Join(c.allowed, ", "))
		}
	}
	hasJob := slices.ContainsFunc(r.request, func(a string) bool { return strings.Contains(a, "{job}") })
	switch {
	case (r.job == "none") != (r.relation == "-"):
		return fmt.Errorf("job %s with relation %s", r.job, r.relation)
	case r.relation == "group" && r.role != "groupmate", r.role == "groupmate" && r.relation != "group" && r.relation != "-":
		return fmt.Errorf("relation group is for the groupmate role (and the groupmate's relation is group)")
	case r.relation == "other" && r.role == "owner":
		return fmt.Errorf("the owner's relation to the job is self")
	case hasJob != (r.job != "none") && !(r.request[0] == "qstat" || r.request[0] == "qselect"):
		return fmt.Errorf("the request names {job} but job is %s, or the other way round", r.job)
	}
	switch {
	case r.expect == "allowed":
	case r.expect == "filtered":
		if r.request[0] != "qstat" && r.request[0] != "qselect" || hasJob {
			return fmt.Errorf("filtered is for listings (qstat, qselect without a job id)")
		}
	default:
		if _, ok := authzCodes[r.expect]; !ok {
			return fmt.Errorf("expect %q (want allowed, filtered or one of the PBSE codes the test knows)", r.expect)
		}
		if r.stderr == "-" {
			return fmt.Errorf("a refusal names the message the user sees")
		}
	}
	if (r.expect == "allowed" || r.expect == "filtered") && r.stderr != "-" {
		return fmt.Errorf("stderr is for refusals")
	}
	return nil
}

// splitAuthzCommand splits a request into words; double quotes group.
func splitAuthzCommand(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, ch := range s {
		switch {
		case ch == '"':
			quoted = !quoted
			inWord = true
		case ch == ' ' && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(ch)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unbalanced quote")
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// createUsers makes the owner's group (owner and groupmate) and another
// group (other, manager, operator), each user with a home directory, all
// removed when the test ends.
func (e *authzEnv) createUsers(t *testing.T) {
	sfx := fmt.Sprintf("%06x", rand.Uint32()&0xffffff)
	ownerGroup, otherGroup := "pbsaz_g_"+sfx, "pbsaz_x_"+sfx
	for _, g := range []string{ownerGroup, otherGroup} {
		authzExec(t, "groupadd", g)
		t.Cleanup(func() {
			if out, err := exec.Command("groupdel", g).CombinedOutput(); err != nil {
				t.Logf("groupdel %s: %v %s", g, err, out)
			}
		})
	}
	e.ownerGroup = ownerGroup
	e.users = map[string]authzUser{}
	for _, u := range []struct{ role, short, group string }{
		{"owner", "own", ownerGroup}, {"groupmate", "grp", ownerGroup},
		{"other", "oth", otherGroup}, {"manager", "mgr", otherGroup}, {"operator", "opr", otherGroup},
	} {
		name := "pbsaz_" + u.short + "_" + sfx
		authzExec(t, "useradd", "-m", "-g", u.group, "-s", "/bin/sh", name)
		t.Cleanup(func() {
			if out, err := exec.Command("userdel", "-r", "-f", name).CombinedOutput(); err != nil {
				t.Logf("userdel %s: %v %s", name, err, out)
			}
		})
		pw, err := user.Lookup(name)
		if err != nil {
			t.Fatalf("the new user %s: %v", name, err)
		}
		uid, err1 := strconv.ParseUint(pw.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(pw.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			t.Fatalf("user %s: uid %q gid %q", name, pw.Uid, pw.Gid)
		}
		e.users[u.role] = authzUser{name: name, cred: testcluster.Cred{UID: uint32(uid), GID: uint32(gid)}}
	}
}

func authzExec(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// startCluster starts the server and one mom, with scheduling off (jobs
// stay queued until root runs them), the manager and operator users in
// their lists, the queue azq and the mom-less node azn.
func (e *authzEnv) startCluster(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	e.c = c
	for _, cmd := range []string{
		"set server scheduling = False",
		"set server managers += " + e.users["manager"].name + "@*",
		"set server operators += " + e.users["operator"].name + "@*",
		"create queue " + authzQueue + " queue_type = execution",
		"set queue " + authzQueue + " enabled = True, started = True",
		fmt.Sprintf("create node %s Mom=localhost,Port=%d", authzNode, testcluster.FreePort(t)),
	} {
		c.MustRun("qmgr", "-c", cmd)
	}
	c.AddMom(authzMom, testcluster.MomOptions{})
	// Room for every running job a row leaves behind until it is deleted.
	c.MustRun("qmgr", "-c", "set node "+authzMom+" resources_available.ncpus = 64")
	e.spool = filepath.Join(c.Home, "azspool")
	if err := os.Mkdir(e.spool, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(e.spool, 0o1777)
}

// run runs a command as role; stdin is empty for none.
func (e *authzEnv) run(role, stdin string, argv ...string) testcluster.Result {
	if role == "root" {
		return e.c.RunEnvAs(e.c.Env(), nil, stdin, argv[0], argv[1:]...)
	}
	u, ok := e.users[role]
	if !ok {
		panic("unknown role " + role)
	}
	return e.c.RunAs(u.cred, stdin, argv[0], argv[1:]...)
}

// root runs a command as root and fails the row unless it succeeds.
func (e *authzEnv) root(t *testing.T, argv ...string) string {
	t.Helper()
	r := e.run("root", "", argv...)
	if r.Code != 0 {
		t.Fatalf("%s (as root): %s", strings.Join(argv, " "), r)
	}
	return r.Stdout
}

// rootQuiet runs a command as root for cleanup, noting failures only.
func (e *authzEnv) rootQuiet(t *testing.T, argv ...string) {
	if r := e.run("root", "", argv...); r.Code != 0 {
		t.Logf("cleanup %s: %s", strings.Join(argv, " "), r)
	}
}

func (e *authzEnv) userName(role string) string {
	if role == "root" {
		return "root"
	}
	return e.users[role].name
}

// runRow runs one row: the setting, the row's job, the request as the
// row's user, then the outcome and its effect (or the absence of one).
func (e *authzEnv) runRow(t *testing.T, r authzRow) {
	if r.gap != "-" && os.Getenv("GOPBS_AUTHZ_GAPS") == "" {
		t.Skipf("known gap (%s:%d): %s", authzMatrixFile, r.line, r.gap)
	}
	e.applySetting(t, r.setting)
	id := ""
	if r.job != "none" {
		id = e.prepareJob(t, r)
	}
	argv := make([]string, len(r.request))
	for i, a := range r.request {
		a = strings.ReplaceAll(a, "{job}", id)
		a = strings.ReplaceAll(a, "{queue}", authzQueue)
		argv[i] = strings.ReplaceAll(a, "{node}", authzNode)
	}
	check := e.effect(t, r, argv, id)
	stdin := ""
	if argv[0] == "qsub" {
		stdin = authzScript
	}
	res := e.run(r.role, stdin, argv...)
	what := fmt.Sprintf("%s as %s (%s)", strings.Join(argv, " "), r.role, e.userName(r.role))
	switch r.expect {
	case "allowed", "filtered":
		if res.Code != 0 {
			t.Fatalf("%s: want %s, got %s", what, r.expect, res)
		}
	default:
		code := authzCodes[r.expect]
		if res.Code == 0 {
			t.Fatalf("%s: want %s (%s), got success: %s", what, r.expect, strings.TrimSpace(code.Message()), res)
		}
		if authzExitIsCode[argv[0]] && res.Code != code.ExitStatus() {
			t.Errorf("%s: exit %d, want %d (%s modulo 256)\n%s", what, res.Code, code.ExitStatus(), r.expect, res)
		}
		if !strings.Contains(res.Stderr, r.stderr) {
			t.Errorf("%s: stderr lacks %q\n%s", what, r.stderr, res)
		}
	}
	check(t, res, r.expect)
}

// applySetting applies a row's setting as root and undoes it when the row
// ends.
func (e *authzEnv) applySetting(t *testing.T, setting string) {
	var set, undo []string
	owner := e.users["owner"].name
	switch setting {
	case "-":
		return
	case "query_other_jobs=False":
		set = []string{"set server query_other_jobs = False"}
		undo = []string{"set server query_other_jobs = True"}
	case "acl_roots=unset":
		set = []string{"unset server acl_roots"}
		undo = []string{"set server acl_roots = root@*"}
	case "queue_acl_users=owner":
		set = []string{"set queue " + authzQueue + " acl_users = " + owner, "set queue " + authzQueue + " acl_user_enable = True"}
		undo = []string{"set queue " + authzQueue + " acl_user_enable = False", "unset queue " + authzQueue + " acl_users"}
	case "queue_acl_groups=owner_group":
		set = []string{"set queue " + authzQueue + " acl_groups = " + e.ownerGroup, "set queue " + authzQueue + " acl_group_enable = True"}
		undo = []string{"set queue " + authzQueue + " acl_group_enable = False", "unset queue " + authzQueue + " acl_groups"}
	case "server_acl_users=owner":
		set = []string{"set server acl_users = " + owner + "@*", "set server acl_user_enable = True"}
		undo = []string{"set server acl_user_enable = False", "unset server acl_users"}
	default:
		t.Fatalf("unknown setting %q", setting)
	}
	t.Cleanup(func() {
		for _, cmd := range undo {
			e.rootQuiet(t, "qmgr", "-c", cmd)
		}
	})
	for _, cmd := range set {
		e.root(t, "qmgr", "-c", cmd)
	}
}

// prepareJob submits the row's job (as the caller for relation self, else
// as the owner) and brings it to the row's state; it is deleted when the
// row ends.
func (e *authzEnv) prepareJob(t *testing.T, r authzRow) string {
	t.Helper()
	submitter := "owner"
	if r.relation == "self" {
		submitter = r.role
	}
	res := e.run(submitter, authzScript, "qsub", "-N", "authz", "-o", e.spool+"/", "-e", e.spool+"/", "-v", "AZ_MARK_DIR="+e.spool)
	if res.Code != 0 {
		t.Fatalf("qsub of the row's job as %s: %s", submitter, res)
	}
	id := strings.TrimSpace(res.Stdout)
	t.Cleanup(func() {
		if st, _ := e.c.JobAttr(id, "job_state"); st != "" && st != "F" {
			e.rootQuiet(t, "qdel", id)
		}
	})
	switch r.job {
	case "queued":
	case "finished":
		// Deleted by root while queued: kept in history (F).
		e.root(t, "qdel", id)
		e.waitJobState(t, id, "F")
	case "held_u", "held_o", "held_s":
		h := strings.TrimPrefix(r.job, "held_")
		e.root(t, "qhold", "-h", h, id)
		if got := e.jobAttr(id, "Hold_Types"); got != h {
			t.Fatalf("job %s held with %s shows Hold_Types %q", id, h, got)
		}
	case "running":
		e.waitMom(t)
		e.root(t, "qrun", id)
		e.waitJobState(t, id, "R")
		// A signal that came before the traps would end the job.
		mark := filepath.Join(e.spool, id+".mark")
		authzWaitFor(t, "job "+id+" ready for signals", func() (bool, string) {
			b, _ := os.ReadFile(mark)
			return strings.Contains(string(b), "READY"), fmt.Sprintf("%q in %s", b, mark)
		})
	}
	return id
}

// waitMom waits, after a server restart, until the mom's node is free.
func (e *authzEnv) waitMom(t *testing.T) {
	t.Helper()
	if !e.momStale {
		return
	}
	// The subtest's t, not the cluster's: a subtest may not fail its parent.
	testcluster.WaitFor(t, "node "+authzMom+" free after the server restarted", 90*time.Second, func() (bool, string) {
		st := e.c.NodeState(authzMom)
		return st == "free", st
	})
	e.momStale = false
}

func (e *authzEnv) jobAttr(id, name string) string {
	v, _ := e.c.JobAttr(id, name)
	return v
}

// authzWaitFor waits until cond holds, at most 20 seconds; cond also says
// what it saw, for the failure message.
func authzWaitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	testcluster.WaitFor(t, what, 20*time.Second, cond)
}

func (e *authzEnv) waitJobState(t *testing.T, id, want string) {
	t.Helper()
	authzWaitFor(t, "job "+id+" state "+want, func() (bool, string) {
		st := e.jobAttr(id, "job_state")
		return st == want, strconv.Quote(st)
	})
}

// serverAttrs is what qmgr list server shows root.
func (e *authzEnv) serverAttrs(t *testing.T) map[string]string {
	t.Helper()
	return e.objectAttrs(t, "server")
}

// objectAttrs is what root's qmgr list shows of object ("server",
// "sched"), by attribute.
func (e *authzEnv) objectAttrs(t *testing.T, object string) map[string]string {
	t.Helper()
	out := e.root(t, "qmgr", "-c", "list "+object)
	attrs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok {
			attrs[k] = v
		}
	}
	return attrs
}

// listsJob reports whether a qstat or qselect listing has a line for id.
func listsJob(out, id string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == id {
			return true
		}
	}
	return false
}

// flagValue is the word after flag in argv ("" if absent).
func flagValue(argv []string, flag string) string {
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == flag {
			return argv[i+1]
		}
	}
	return ""
}

// effect records what a row's request could change, before it runs, and
// returns the check of the outcome: for allowed the change is there, for
// filtered the owner's job is not listed, for a refusal nothing changed.
func (e *authzEnv) effect(t *testing.T, r authzRow, argv []string, id string) func(*testing.T, testcluster.Result, string) {
	t.Helper()
	switch argv[0] {
	case "qsub":
		before := e.serverAttrs(t)["next_job_number"]
		if before == "" {
			t.Fatalf("qmgr list server shows no next_job_number")
		}
		// A before dependency changes the job it names: the row's job.
		registers := strings.Contains(flagValue(argv, "-W"), "depend=before")
		var targetState, targetDepend string
		if registers {
			targetState, targetDepend = e.jobAttr(id, "job_state"), e.jobAttr(id, "depend")
		}
		return func(t *testing.T, res testcluster.Result, expect string) {
			if expect != "allowed" {
				if res.Stdout != "" {
					t.Errorf("a refused qsub printed %q", res.Stdout)
				}
				if after := e.serverAttrs(t)["next_job_number"]; after != before {
					t.Errorf("a refused qsub used a job number: next_job_number %s, then %s", before, after)
				}
				if registers {
					if st, dep := e.jobAttr(id, "job_state"), e.jobAttr(id, "depend"); st != targetState || dep != targetDepend {
						t.Errorf("job %s after a refused before dependency: state %s depend %q, want %s %q as before", id, st, dep, targetState, targetDepend)
					}
				}
				return
			}
			if !jobIDLine.MatchString(res.Stdout) {
				t.Fatalf("qsub printed %q, want one job id", res.Stdout)
			}
			newID := strings.TrimSpace(res.Stdout)
			t.Cleanup(func() { e.rootQuiet(t, "qdel", newID) })
			if registers {
				if dep := e.jobAttr(id, "depend"); !strings.Contains(dep, ":"+newID) {
					t.Errorf("job %s: depend %q after %s's before dependency, want it to name %s", id, dep, r.role, newID)
				}
			}
			if owner := e.jobAttr(newID, "Job_Owner"); !strings.HasPrefix(owner, e.userName(r.role)+"@") {
				t.Errorf("job %s: Job_Owner %q, want %s@...", newID, owner, e.userName(r.role))
			}
			if q := e.jobAttr(newID, "queue"); q != authzQueue {
				t.Errorf("job %s is in queue %q, want %s", newID, q, authzQueue)
			}
		}
	case "qstat", "qselect":
		full := argv[0] == "qstat" && slices.Contains(argv, "-f")
		return func(t *testing.T, res testcluster.Result, expect string) {
			shown := listsJob(res.Stdout, id)
			if full {
				shown = strings.Contains(res.Stdout, "Job Id: "+id+"\n")
			}
			if shown != (expect == "allowed") {
				t.Errorf("%s as %s: job %s shown %v, want %v\n%s", argv[0], r.role, id, shown, expect == "allowed", res)
			}
		}
	case "qdel":
		return func(t *testing.T, res testcluster.Result, expect string) {
			st := e.jobAttr(id, "job_state")
			if expect == "allowed" && st != "F" && st != "" {
				t.Errorf("job %s is %q after qdel, want finished", id, st)
			}
			if expect != "allowed" && st != "Q" {
				t.Errorf("job %s is %q after a refused qdel, want Q", id, st)
			}
		}
	case "qalter":
		name, want := "Priority", flagValue(argv, "-p")
		if h := flagValue(argv, "-h"); h != "" {
			name, want = "Hold_Types", h
		}
		before := e.jobAttr(id, name)
		if before == want {
			t.Fatalf("job %s already has %s = %s: the row cannot show an effect", id, name, want)
		}
		return func(t *testing.T, res testcluster.Result, expect string) {
			got := e.jobAttr(id, name)
			if expect == "allowed" && got != want {
				t.Errorf("job %s: %s = %q after qalter, want %q", id, name, got, want)
			}
			if expect != "allowed" && got != before {
				t.Errorf("job %s: %s = %q after a refused qalter, want %q as before", id, name, got, before)
			}
		}
	case "qhold", "qrls":
		h := flagValue(argv, "-h")
		before := e.jobAttr(id, "Hold_Types")
		hold := argv[0] == "qhold"
		if strings.Contains(before, h) == hold {
			t.Fatalf("job %s has Hold_Types %q before %s -h %s: the row cannot show an effect", id, before, argv[0], h)
		}
		return func(t *testing.T, res testcluster.Result, expect string) {
			got := e.jobAttr(id, "Hold_Types")
			if expect == "allowed" && strings.Contains(got, h) != hold {
				t.Errorf("job %s: Hold_Types %q after %s -h %s", id, got, argv[0], h)
			}
			if expect != "allowed" && got != before {
				t.Errorf("job %s: Hold_Types %q after a refused %s, want %q as before", id, got, argv[0], before)
			}
		}
	case "qrun":
		e.waitMom(t)
		return func(t *testing.T, res testcluster.Result, expect string) {
			if expect == "allowed" {
				e.waitJobState(t, id, "R")
				return
			}
			if st := e.jobAttr(id, "job_state"); st != "Q" {
				t.Errorf("job %s is %q after a refused qrun, want Q", id, st)
			}
		}
	case "qsig":
		return e.signalEffect(t, argv, id)
	case "qmgr":
		return e.qmgrEffect(t, argv)
	case "pbsnodes":
		e.rootQuiet(t, "pbsnodes", "-c", authzNode)
		if st := e.c.NodeState(authzNode); strings.Contains(st, "offline") {
			t.Fatalf("node %s is %q before the row", authzNode, st)
		}
		t.Cleanup(func() { e.rootQuiet(t, "pbsnodes", "-c", authzNode) })
		return func(t *testing.T, res testcluster.Result, expect string) {
			st := e.c.NodeState(authzNode)
			if off := strings.Contains(st, "offline"); off != (expect == "allowed") {
				t.Errorf("node %s is %q after pbsnodes -o as %s", authzNode, st, r.role)
			}
		}
	case "qterm":
		return func(t *testing.T, res testcluster.Result, expect string) {
			if expect != "allowed" {
				if st := e.run("root", "", "qstat", "-B"); st.Code != 0 {
					t.Fatalf("the server stopped after a refused qterm: %s", st)
				}
				return
			}
			if code := e.c.WaitServerExit(30 * time.Second); code < 0 {
				t.Fatalf("pbs_server still runs 30s after qterm as %s", r.role)
			}
			// Start it again for the rows that follow; StartServer
			// reports through the cluster's T.
			parent := e.c.T
			e.c.T = t
			defer func() { e.c.T = parent }()
			e.c.StartServer()
			// The mom reports to the new server in its own time; rows
			// that run jobs wait for it.
			e.momStale = true
		}
	}
	t.Fatalf("no effect check for %s", argv[0])
	return nil
}

// signalEffect checks qsig: suspend shows S (and is resumed after); other
// signals are noted by the job in its mark file. For a refusal, root sends
// USR2 after it: once the job has noted USR2, a USR1 that got through would
// have been noted before it.
func (e *authzEnv) signalEffect(t *testing.T, argv []string, id string) func(*testing.T, testcluster.Result, string) {
	t.Helper()
	sig := flagValue(argv, "-s")
	mark := filepath.Join(e.spool, id+".mark")
	marks := func() []string {
		b, _ := os.ReadFile(mark)
		return strings.Fields(string(b))
	}
	if sig == "suspend" {
		return func(t *testing.T, res testcluster.Result, expect string) {
			if expect != "allowed" {
				if st := e.jobAttr(id, "job_state"); st != "R" {
					t.Errorf("job %s is %q after a refused suspend, want R", id, st)
				}
				return
			}
			e.waitJobState(t, id, "S")
			e.root(t, "qsig", "-s", "resume", id)
			e.waitJobState(t, id, "R")
		}
	}
	if sig != "USR1" {
		t.Fatalf("the test notes USR1 only, not %s", sig)
	}
	return func(t *testing.T, res testcluster.Result, expect string) {
		if expect == "allowed" {
			authzWaitFor(t, "job "+id+" noting USR1", func() (bool, string) {
				m := marks()
				return slices.Contains(m, "USR1"), fmt.Sprintf("%q", m)
			})
			return
		}
		e.root(t, "qsig", "-s", "USR2", id)
		authzWaitFor(t, "job "+id+" noting root's USR2", func() (bool, string) {
			m := marks()
			return slices.Contains(m, "USR2"), fmt.Sprintf("%q", m)
		})
		if m := marks(); slices.Contains(m, "USR1") {
			t.Errorf("job %s got the refused USR1: marks %q", id, m)
		}
	}
}

// qmgrEffect handles qmgr -c with "set server A = V", "create queue Q
// ...", "create resource R ...", "list resource" and "list server" /
// "print server".
func (e *authzEnv) qmgrEffect(t *testing.T, argv []string) func(*testing.T, testcluster.Result, string) {
	t.Helper()
	words := strings.Fields(flagValue(argv, "-c"))
	switch {
	case len(words) == 5 && words[0] == "set" && (words[1] == "server" || words[1] == "sched") && words[3] == "=":
		object, name, value := words[1], words[2], words[4]
		e.rootQuiet(t, "qmgr", "-c", "unset "+object+" "+name)
		if v, ok := e.objectAttrs(t, object)[name]; ok {
			t.Fatalf("%s %s = %s after unsetting it", object, name, v)
		}
		t.Cleanup(func() { e.rootQuiet(t, "qmgr", "-c", "unset "+object+" "+name) })
		return func(t *testing.T, res testcluster.Result, expect string) {
			v, ok := e.objectAttrs(t, object)[name]
			if expect == "allowed" && v != value {
				t.Errorf("%s %s = %q after qmgr set, want %q", object, name, v, value)
			}
			if expect != "allowed" && ok {
				t.Errorf("%s %s = %q after a refused qmgr set, want it unset", object, name, v)
			}
		}
	case len(words) >= 3 && words[0] == "create" && words[1] == "queue":
		q := words[2]
		exists := func() bool { return e.run("root", "", "qstat", "-Q", q).Code == 0 }
		if exists() {
			e.root(t, "qmgr", "-c", "delete queue "+q)
		}
		t.Cleanup(func() {
			if exists() {
				e.rootQuiet(t, "qmgr", "-c", "delete queue "+q)
			}
		})
		return func(t *testing.T, res testcluster.Result, expect string) {
			if got := exists(); got != (expect == "allowed") {
				t.Errorf("queue %s exists %v after qmgr create, want %v", q, got, expect == "allowed")
			}
		}
	case len(words) >= 3 && words[0] == "create" && words[1] == "resource":
		r := words[2]
		exists := func() bool { return e.run("root", "", "qmgr", "-c", "list resource "+r).Code == 0 }
		if exists() {
			e.root(t, "qmgr", "-c", "delete resource "+r)
		}
		t.Cleanup(func() {
			if exists() {
				e.rootQuiet(t, "qmgr", "-c", "delete resource "+r)
			}
		})
		return func(t *testing.T, res testcluster.Result, expect string) {
			if got := exists(); got != (expect == "allowed") {
				t.Errorf("resource %s exists %v after qmgr create, want %v", r, got, expect == "allowed")
			}
		}
	case len(words) == 2 && words[0] == "list" && words[1] == "resource":
		// Root makes one for the list to show, whoever lists.
		e.root(t, "qmgr", "-c", "create resource az_listed type=string")
		t.Cleanup(func() { e.rootQuiet(t, "qmgr", "-c", "delete resource az_listed") })
		return func(t *testing.T, res testcluster.Result, expect string) {
			if !strings.Contains(res.Stdout, "Resource az_listed\n    type = string\n") {
				t.Errorf("qmgr list resource shows no az_listed:\n%s", res)
			}
		}
	case len(words) == 2 && (words[1] == "server" || words[1] == "sched") && (words[0] == "list" || words[0] == "print"):
		want := map[string]string{"server": "Server ", "sched": "Sched default\n"}[words[1]]
		if words[0] == "print" {
			want = "set " + words[1] + " "
		}
		return func(t *testing.T, res testcluster.Result, expect string) {
			if !strings.Contains(res.Stdout, want) {
				t.Errorf("qmgr %s %s shows no %q:\n%s", words[0], words[1], want, res)
			}
		}
	}
	t.Fatalf("no effect check for qmgr %q", words)
	return nil
}
