package shepherd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// OpenPBS's table: a prologue's exit 0 runs the job, exit 1 aborts it and
// anything else requeues it, whatever the cause.
func TestPrologueActions(t *testing.T) {
	for code, want := range map[int]prologueAction{
		0:                   prologueRun,
		1:                   prologueAbort,
		2:                   prologueRequeue,
		255:                 prologueRequeue,
		pelogRefused:        prologueRequeue,
		pelogNoInput:        prologueRequeue,
		pelogFailed:         prologueRequeue,
		pelogTimeout:        prologueRequeue,
		int(syscall.EACCES): prologueRequeue,
	} {
		if got := actionOf(code); got != want {
			t.Errorf("actionOf(%d) = %v, want %v", code, got, want)
		}
	}
}

// writeProgram writes an executable script with the given mode.
func writeProgram(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// A prologue or epilogue runs only as a regular file of the mom's user,
// readable and executable by it and writable by no one else.
func TestCheckPelog(t *testing.T) {
	dir := t.TempDir()
	me := uint32(os.Geteuid())
	writeProgram(t, filepath.Join(dir, "ok"), "exit 0\n", 0o755)
	writeProgram(t, filepath.Join(dir, "ok700"), "exit 0\n", 0o700)
	writeProgram(t, filepath.Join(dir, "group"), "exit 0\n", 0o775)
	writeProgram(t, filepath.Join(dir, "other"), "exit 0\n", 0o757)
	writeProgram(t, filepath.Join(dir, "noexec"), "exit 0\n", 0o644)
	os.Mkdir(filepath.Join(dir, "adir"), 0o755)
	writeProgram(t, filepath.Join(dir, "user505"), "exit 0\n", 0o505)
	for _, tt := range []struct {
		name    string
		owner   uint32
		forUser bool
		found   bool
		code    int
		why     string
	}{
		{"missing", me, false, false, 0, ""},
		{"ok", me, false, true, 0, ""},
		{"ok700", me, false, true, 0, ""},
		{"ok", me + 1, false, true, pelogRefused, "not by uid"},
		{"group", me, false, true, pelogRefused, "writable by its group or others"},
		{"other", me, false, true, pelogRefused, "writable by its group or others"},
		{"noexec", me, false, true, pelogRefused, "not readable and executable by its owner"},
		{"adir", me, false, true, pelogRefused, "not a regular file"},
		// Run as the job's owner: others must read and execute it.
		{"ok", me, true, true, 0, ""},
		{"user505", me, true, true, 0, ""},
		{"ok700", me, true, true, pelogRefused, "not readable and executable by others"},
		{"other", me, true, true, pelogRefused, "writable by its group or others"},
	} {
		found, code, why := checkPelog(filepath.Join(dir, tt.name), tt.owner, tt.forUser)
		if found != tt.found || code != tt.code || !strings.Contains(why, tt.why) {
			t.Errorf("%s (owner %d, for user %v): %v %d %q, want %v %d %q", tt.name, tt.owner, tt.forUser, found, code, why, tt.found, tt.code, tt.why)
		}
	}
}

// Torque's parallel and precancel programs are not run; the mom names
// the ones it finds.
func TestUnrunPelogs(t *testing.T) {
	dir := t.TempDir()
	writeProgram(t, filepath.Join(dir, "prologue"), "exit 0\n", 0o755)
	writeProgram(t, filepath.Join(dir, "epilogue.precancel"), "exit 0\n", 0o755)
	writeProgram(t, filepath.Join(dir, "prologue.user"), "exit 0\n", 0o755)
	writeProgram(t, filepath.Join(dir, "epilogue.parallel"), "exit 0\n", 0o755)
	if got := UnrunPelogs(dir); strings.Join(got, " ") != "epilogue.parallel epilogue.precancel" {
		t.Errorf("unrunPelogs: %q", got)
	}
}

// Torque's -T name picks prologue.<name> where it exists, else the plain
// prologue.
func TestPelogPath(t *testing.T) {
	dir := t.TempDir()
	writeProgram(t, filepath.Join(dir, "prologue.gpu"), "exit 0\n", 0o755)
	for _, tt := range []struct{ jobType, want string }{
		{"", "prologue"},
		{"gpu", "prologue.gpu"},
		{"other", "prologue"},
	} {
		if got := pelogPath(dir, filePrologue, tt.jobType); got != filepath.Join(dir, tt.want) {
			t.Errorf("jobtype %q: %s, want %s", tt.jobType, got, tt.want)
		}
	}
}

// runPelog passes the arguments, the environment, the directory and the
// files; reports the exit status, a signal and the time limit; and
// leaves nothing of the program's session behind.
func TestRunPelog(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	fd, err := syscall.Open(out, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	null, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(null)
	cmd := func(name, body string, limit time.Duration) pelogCmd {
		p := filepath.Join(dir, name)
		writeProgram(t, p, body, 0o755)
		return pelogCmd{Path: p, Args: []string{"1.srv", "alice", "staff"}, Env: pelogEnv("/home/alice"), Dir: dir,
			Files: [3]int{null, fd, fd}, Limit: limit, Umask: 0o022}
	}

	r := runPelog(cmd("args", "echo \"$#:$1:$2:$3:$PBS_JOBDIR:$(pwd)\"\nexit 3\n", time.Minute))
	if !r.Ran || r.Code != 3 || r.Why != "" || !r.failed() {
		t.Errorf("exit 3: %+v", r)
	}
	if b, _ := os.ReadFile(out); string(b) != "3:1.srv:alice:staff:/home/alice:"+dir+"\n" {
		t.Errorf("output %q", b)
	}
	if r := runPelog(cmd("zero", "exit 0\n", time.Minute)); !r.Ran || r.Code != 0 || r.failed() {
		t.Errorf("exit 0: %+v", r)
	}
	if r := runPelog(pelogCmd{Path: filepath.Join(dir, "none")}); r.Ran || r.Code != 0 {
		t.Errorf("no program: %+v", r)
	}
	if r := runPelog(cmd("signal", "kill -TERM $$\n", time.Minute)); r.Code != pelogFailed || !strings.Contains(r.Why, "signal 15") {
		t.Errorf("killed: %+v", r)
	}

	// At the limit the program and what it started are killed; so is
	// what a program that exits in time leaves running.
	pids := filepath.Join(dir, "pids")
	start := time.Now()
	r = runPelog(cmd("slow", "sleep 60 &\necho $! >> "+pids+"\nsleep 60\n", 300*time.Millisecond))
	if r.Code != pelogTimeout || !strings.Contains(r.Why, "killed after running 300ms") || time.Since(start) > 10*time.Second {
		t.Errorf("timeout: %+v after %v", r, time.Since(start))
	}
	if r := runPelog(cmd("leaves", "sleep 60 &\necho $! >> "+pids+"\nexit 0\n", time.Minute)); r.Code != 0 {
		t.Errorf("leaves: %+v", r)
	}
	b, _ := os.ReadFile(pids)
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if !testcluster.WaitGone(pid, 5*time.Second) {
			t.Errorf("process %d of a prologue survived it", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// The epilogue's ten arguments, OpenPBS's.
func TestEpilogueArgs(t *testing.T) {
	job := &proto.MomJob{JobID: "7.srv", Name: "sim", Queue: "workq", EGroup: "staff",
		Resources: map[string]string{"walltime": "01:00:00", "ncpus": "2", "mem": "1gb"}}
	usr := &asuser.Account{Name: "alice"}
	res := &Result{ExitStatus: 271, Used: proto.Usage{CPUSecs: 61, MemBytes: 2048 * 1024, WallSecs: 30}}
	got := epilogueArgs(job, usr, 4242, res, Settings{WallMult: 2})
	want := []string{"7.srv", "alice", "staff", "sim", "4242", "mem=1gb,ncpus=2,walltime=01:00:00",
		"cput=00:01:01,mem=2048kb,ncpus=2,walltime=00:01:00", "workq", "null", "271"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("epilogue arguments\n got %q\nwant %q", got, want)
	}
	job.Account = "proj1"
	if got := epilogueArgs(job, usr, 0, res, Settings{}); got[8] != "proj1" || got[4] != "0" {
		t.Errorf("account and session: %q", got)
	}
	if got := prologueArgs(job, usr); strings.Join(got, "|") != "7.srv|alice|staff" {
		t.Errorf("prologue arguments %q", got)
	}
}

// Keep_Files: a kept stream's file is in the owner's home under the name
// the server gave; a joined stream goes with its file.
func TestStdPaths(t *testing.T) {
	usr := &asuser.Account{Name: "alice", Home: "/home/alice"}
	for _, tt := range []struct {
		job       proto.MomJob
		out, errp string
	}{
		{proto.MomJob{OutputPath: "h:/w/j.o1", ErrorPath: "h:/w/j.e1"}, "/w/j.o1", "/w/j.e1"},
		{proto.MomJob{OutputPath: "h:/w/j.o1", ErrorPath: "h:/w/j.e1", KeepOutput: "j.o1"}, "/home/alice/j.o1", "/w/j.e1"},
		{proto.MomJob{OutputPath: "h:/w/j.o1", ErrorPath: "h:/w/j.e1", KeepOutput: "j.o1", KeepError: "j.e1"}, "/home/alice/j.o1", "/home/alice/j.e1"},
		{proto.MomJob{OutputPath: "h:/w/j.o1", ErrorPath: "h:/w/j.e1", KeepOutput: "j.o1", JoinPath: "oe"}, "/home/alice/j.o1", "/home/alice/j.o1"},
		{proto.MomJob{OutputPath: "h:/w/j.o1", ErrorPath: "h:/w/j.e1", KeepError: "j.e1", JoinPath: "oe"}, "/w/j.o1", "/w/j.o1"},
		{proto.MomJob{OutputPath: "h:/w/j.o1", ErrorPath: "h:/w/j.e1", KeepOutput: "../../etc/x"}, "/home/alice/x", "/w/j.e1"},
	} {
		sh := &shepherd{job: &tt.job, usr: usr}
		if out, errp := sh.stdPaths(); out != tt.out || errp != tt.errp {
			t.Errorf("%+v: %s %s, want %s %s", tt.job, out, errp, tt.out, tt.errp)
		}
	}
}

// TestHelperShepherd is the shepherd process of the tests below (it runs
// only when they start it).
func TestHelperShepherd(t *testing.T) {
	dir := os.Getenv("GOPBS_TEST_SHEPHERD")
	if dir == "" {
		t.Skip("run by the shepherd tests")
	}
	os.Exit(Run(dir))
}

// shepherdFixture is a mom_priv with one job directory.
type shepherdFixture struct {
	priv, dir, work string
}

func newShepherdFixture(t *testing.T, script string, set Settings, job proto.MomJob) *shepherdFixture {
	t.Helper()
	me, err := asuser.Lookup(currentUser(t), "")
	if err != nil {
		t.Fatal(err)
	}
	f := &shepherdFixture{priv: filepath.Join(t.TempDir(), "mom_priv"), work: t.TempDir()}
	f.dir = filepath.Join(f.priv, "jobs", "5.srv")
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	job.JobID, job.RunCount, job.Name, job.Queue, job.EUser = "5.srv", 1, "jobname", "workq", me.Name
	job.OutputPath, job.ErrorPath, job.WorkDir = "h:"+filepath.Join(f.work, "out"), "h:"+filepath.Join(f.work, "err"), f.work
	job.Resources = map[string]string{"ncpus": "1"}
	set.PelogDir = f.priv
	if err := WriteJSON(f.dir, FileJob, JobFile{MomJob: job, Settings: set}, 0o600); err != nil {
		t.Fatal(err)
	}
	writeProgram(t, filepath.Join(f.dir, FileScript), script, 0o700)
	return f
}

func currentUser(t *testing.T) string {
	name, err := asuser.UserName(uint32(os.Geteuid()))
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// run starts the shepherd as its own process and returns its result.
func (f *shepherdFixture) run(t *testing.T) Result {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperShepherd$")
	cmd.Env = append(os.Environ(), "GOPBS_TEST_SHEPHERD="+f.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shepherd: %v\n%s", err, out)
	}
	var res Result
	if err := ReadJSON(filepath.Join(f.dir, FileResult), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func (f *shepherdFixture) read(t *testing.T, name string) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(f.work, name))
	return string(b)
}

// The prologue runs before the script with the job's output files as its
// own, the epilogue after it appending to them, each with OpenPBS's
// arguments; the result is recorded after the epilogue.
func TestShepherdRunsPrologueAndEpilogue(t *testing.T) {
	f := newShepherdFixture(t, "echo job\necho joberr >&2\nexit 3\n", Settings{}, proto.MomJob{Account: "acct"})
	writeProgram(t, filepath.Join(f.priv, filePrologue), "echo \"$@\" > "+filepath.Join(f.work, "pro.args")+"\necho prologue\necho proerr >&2\n", 0o755)
	writeProgram(t, filepath.Join(f.priv, fileEpilogue), "echo \"$@\" > "+filepath.Join(f.work, "epi.args")+"\necho epilogue\necho epierr >&2\n"+
		"if test -e "+filepath.Join(f.dir, FileResult)+"; then echo early > "+filepath.Join(f.work, "result.seen")+"; fi\n", 0o755)
	res := f.run(t)
	if res.ExitStatus != 3 || len(res.Notes) != 0 {
		t.Fatalf("result %+v", res)
	}
	me := currentUser(t)
	if got := strings.Fields(f.read(t, "pro.args")); len(got) != 3 || got[0] != "5.srv" || got[1] != me {
		t.Errorf("prologue arguments %q", got)
	}
	epi := strings.Fields(f.read(t, "epi.args"))
	if len(epi) != 10 || epi[0] != "5.srv" || epi[3] != "jobname" || epi[4] == "0" || epi[5] != "ncpus=1" ||
		!strings.HasPrefix(epi[6], "cput=") || epi[7] != "workq" || epi[8] != "acct" || epi[9] != "3" {
		t.Errorf("epilogue arguments %q", epi)
	}
	if got := f.read(t, "out"); got != "prologue\njob\nepilogue\n" {
		t.Errorf("output file %q", got)
	}
	if got := f.read(t, "err"); got != "proerr\njoberr\nepierr\n" {
		t.Errorf("error file %q", got)
	}
	if got := f.read(t, "result.seen"); got != "" {
		t.Errorf("the result was recorded before the epilogue ended")
	}
}

// Exit 1 of the prologue aborts the job (its script never runs, its
// error file says why); another exit status or a refused prologue
// requeues it; a prologue past $prologalarm is killed and the job
// requeued. The epilogue runs after each, with the job's exit status.
func TestShepherdPrologueFailures(t *testing.T) {
	for _, tt := range []struct {
		name    string
		body    string
		mode    os.FileMode
		alarm   int
		exit    int
		comment string
	}{
		{"exit 1", "exit 1\n", 0o755, 0, proto.JobExecFail2, "Job aborted: prologue "},
		{"exit 2", "exit 2\n", 0o755, 0, proto.JobExecRetry, "exited 2"},
		{"group writable", "exit 0\n", 0o775, 0, proto.JobExecRetry, "writable by its group or others"},
		{"too slow", "sleep 30\n", 0o755, 1, proto.JobExecRetry, "killed after running 1s ($prologalarm)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newShepherdFixture(t, "touch ran\n", Settings{PrologAlarm: tt.alarm}, proto.MomJob{})
			writeProgram(t, filepath.Join(f.priv, filePrologue), tt.body, tt.mode)
			writeProgram(t, filepath.Join(f.priv, fileEpilogue), "echo \"$@\" > "+filepath.Join(f.work, "epi.args")+"\n", 0o755)
			res := f.run(t)
			if res.ExitStatus != tt.exit || !strings.Contains(res.Comment, tt.comment) ||
				len(res.Notes) != 1 || !strings.HasPrefix(res.Notes[0], "prologue failed: ") {
				t.Fatalf("result %+v, want exit %d and a comment with %q", res, tt.exit, tt.comment)
			}
			if _, err := os.Stat(filepath.Join(f.work, "ran")); err == nil {
				t.Error("the job's script ran")
			}
			if epi := strings.Fields(f.read(t, "epi.args")); len(epi) != 10 || epi[9] != strconv.Itoa(tt.exit) || epi[4] != "0" {
				t.Errorf("epilogue arguments %q", epi)
			}
			if abort := tt.exit == proto.JobExecFail2; abort != strings.Contains(f.read(t, "err"), "PBS: job aborted: prologue") {
				t.Errorf("error file %q", f.read(t, "err"))
			}
		})
	}
}

// Torque's -T picks the typed programs; a failing epilogue is noted and
// changes nothing.
func TestShepherdJobTypeAndFailingEpilogue(t *testing.T) {
	f := newShepherdFixture(t, "exit 0\n", Settings{}, proto.MomJob{JobType: "gpu"})
	writeProgram(t, filepath.Join(f.priv, filePrologue), "exit 1\n", 0o755)
	writeProgram(t, filepath.Join(f.priv, filePrologue+".gpu"), "echo gpu prologue\n", 0o755)
	writeProgram(t, filepath.Join(f.priv, fileEpilogue), "exit 7\n", 0o755)
	res := f.run(t)
	if res.ExitStatus != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "epilogue failed: "+filepath.Join(f.priv, fileEpilogue)+" exited 7") {
		t.Fatalf("result %+v", res)
	}
	if got := f.read(t, "out"); got != "gpu prologue\n" {
		t.Errorf("output %q", got)
	}
}

// asOwner makes the fixture's job one of usr's (the test runs as root):
// the job file names them, the script is theirs, and they can reach the
// fixture's directories and write in its work directory.
func (f *shepherdFixture) asOwner(t *testing.T, usr *asuser.Account) {
	t.Helper()
	var jf JobFile
	if err := ReadJSON(filepath.Join(f.dir, FileJob), &jf); err != nil {
		t.Fatal(err)
	}
	jf.EUser, jf.OwnerAccount = usr.Name, usr
	if err := WriteJSON(f.dir, FileJob, jf, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(filepath.Join(f.dir, FileScript), int(usr.UID), int(usr.GID)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(f.priv), filepath.Dir(filepath.Dir(f.priv)), filepath.Dir(f.work)} {
		os.Chmod(d, 0o755)
	}
	os.Chmod(f.work, 0o777)
}

// Torque's prologue.user and epilogue.user run as the job's owner, the
// user prologue after the prologue and the user epilogue before the
// epilogue, with Torque's arguments and none of the mom's environment.
func TestShepherdRunsUserPrologueAndEpilogue(t *testing.T) {
	usr, asOther := tmpOwner(t)
	if !asOther {
		t.Skip("needs root to run a job as another user")
	}
	f := newShepherdFixture(t, "echo job\n", Settings{}, proto.MomJob{Account: "acct"})
	f.asOwner(t, usr)
	w := f.work
	writeProgram(t, filepath.Join(f.priv, filePrologue), "id -u > "+w+"/pro.uid\necho prologue\n", 0o755)
	writeProgram(t, filepath.Join(f.priv, filePrologueUser), "id -u > "+w+"/pu.uid\necho \"$@\" > "+w+"/pu.args\nenv > "+w+"/pu.env\necho prologue.user\n", 0o755)
	writeProgram(t, filepath.Join(f.priv, fileEpilogueUser), "id -u > "+w+"/eu.uid\necho \"$@\" > "+w+"/eu.args\necho epilogue.user\n", 0o755)
	writeProgram(t, filepath.Join(f.priv, fileEpilogue), "echo epilogue\n", 0o755)
	res := f.run(t)
	if res.ExitStatus != 0 || len(res.Notes) != 0 {
		t.Fatalf("result %+v", res)
	}
	if got := f.read(t, "out"); got != "prologue\nprologue.user\njob\nepilogue.user\nepilogue\n" {
		t.Errorf("output file %q", got)
	}
	uid := strconv.Itoa(int(usr.UID))
	if pro, pu, eu := strings.TrimSpace(f.read(t, "pro.uid")), strings.TrimSpace(f.read(t, "pu.uid")), strings.TrimSpace(f.read(t, "eu.uid")); pro != "0" || pu != uid || eu != uid {
		t.Errorf("ran as uid prologue %q, prologue.user %q, epilogue.user %q; want 0, %s, %s", pro, pu, eu, uid, uid)
	}
	if got := strings.Fields(f.read(t, "pu.args")); len(got) != 7 || got[0] != "5.srv" || got[1] != usr.Name || got[3] != "jobname" || got[4] != "ncpus=1" || got[5] != "workq" || got[6] != "acct" {
		t.Errorf("prologue.user arguments %q", got)
	}
	if got := strings.Fields(f.read(t, "eu.args")); len(got) != 10 || got[1] != usr.Name || got[9] != "0" {
		t.Errorf("epilogue.user arguments %q", got)
	}
	if env := f.read(t, "pu.env"); !strings.Contains(env, "USER="+usr.Name+"\n") || strings.Contains(env, "GOPBS_TEST_SHEPHERD") {
		t.Errorf("prologue.user environment:\n%s", env)
	}
}

// A user prologue stops the job as a prologue does (exit 1 aborts it,
// a refused program requeues it); the user epilogue still runs.
func TestShepherdUserPrologueFailures(t *testing.T) {
	usr, asOther := tmpOwner(t)
	if !asOther {
		t.Skip("needs root to run a job as another user")
	}
	for _, tt := range []struct {
		name    string
		mode    os.FileMode
		exit    int
		comment string
	}{
		{"exit 1", 0o755, proto.JobExecFail2, filePrologueUser + " exited 1"},
		{"closed to others", 0o750, proto.JobExecRetry, "not readable and executable by others"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newShepherdFixture(t, "touch ran\n", Settings{}, proto.MomJob{})
			f.asOwner(t, usr)
			writeProgram(t, filepath.Join(f.priv, filePrologueUser), "exit 1\n", tt.mode)
			writeProgram(t, filepath.Join(f.priv, fileEpilogueUser), "echo \"$@\" > "+f.work+"/eu.args\n", 0o755)
			res := f.run(t)
			if res.ExitStatus != tt.exit || !strings.Contains(res.Comment, tt.comment) {
				t.Fatalf("result %+v, want exit %d and a comment with %q", res, tt.exit, tt.comment)
			}
			if _, err := os.Stat(filepath.Join(f.work, "ran")); err == nil {
				t.Error("the job's script ran")
			}
			if eu := strings.Fields(f.read(t, "eu.args")); len(eu) != 10 || eu[9] != strconv.Itoa(tt.exit) {
				t.Errorf("epilogue.user arguments %q", eu)
			}
		})
	}
}
