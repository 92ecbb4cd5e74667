package integration

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// pelogScript writes mom_priv/<name> of m: a /bin/sh program that
// records its arguments in dir/<name>.args and runs body.
func pelogScript(t *testing.T, m *testcluster.Mom, name, dir, body string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(m.Home, "mom_priv", name)
	text := "#!/bin/sh\necho \"$@\" >> " + filepath.Join(dir, name+".args") + "\n" + body
	if err := os.WriteFile(p, []byte(text), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// torqueSubmit submits script with qsub in the torque personality and
// checks that the job shows attribute name = want.
func torqueSubmit(t *testing.T, c *testcluster.Cluster, script, name, want string, args ...string) string {
	t.Helper()
	r := c.RunEnvAs(append(c.Env(), "PBS_PERSONALITY=torque"), nil, script, "qsub", args...)
	if r.Code != 0 {
		t.Fatalf("qsub %v: %s", args, r)
	}
	id := strings.TrimSpace(r.Stdout)
	if got := attr(t, c, id, name); got != want {
		t.Errorf("qsub %v: %s = %q, want %q", args, name, got, want)
	}
	return id
}

// argsOf returns the argument lines a program recorded, one per run.
func argsOf(t *testing.T, dir, name string) [][]string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, name+".args"))
	var runs [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line != "" {
			runs = append(runs, strings.Fields(line))
		}
	}
	return runs
}

// pbs_mom runs mom_priv/prologue and mom_priv/epilogue as OpenPBS's mom
// does: the prologue with the job id, user and group before the script,
// writing into the job's output files; the epilogue with OpenPBS's ten
// arguments after it, appending to them, before the job's end is
// reported. A prologue that exits 1 aborts the job with a comment; one
// that exits 2, is writable by others or runs past $prologalarm gets the
// job requeued; Torque's qsub -T name picks prologue.<name>; a mom killed
// while the epilogue runs loses nothing.
func TestPrologueAndEpilogue(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	m := c.AddMom("n1", testcluster.MomOptions{Config: "$prologalarm 3\n"})
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	out := func(name, id string) string { return filepath.Join(c.Home, name+".o"+strings.SplitN(id, ".", 2)[0]) }
	errf := func(name, id string) string { return filepath.Join(c.Home, name+".e"+strings.SplitN(id, ".", 2)[0]) }
	requeued := func(t *testing.T, id, why string) {
		t.Helper()
		waitFor(t, "the job requeued with a comment naming "+why, 20*time.Second, func() bool {
			st, _ := c.JobAttr(id, "job_state")
			return st == "Q" && strings.Contains(attr(t, c, id, "comment"), why)
		})
		if got := attr(t, c, id, "comment"); !strings.HasPrefix(got, "Job requeued: prologue ") || !strings.HasSuffix(got, "(n1)") {
			t.Errorf("comment %q", got)
		}
	}

	t.Run("arguments and output", func(t *testing.T) {
		pelogScript(t, m, "prologue", dir, "echo prologue says\necho prologue warns >&2\n", 0o755)
		pelogScript(t, m, "epilogue", dir, "echo epilogue says\n", 0o755)
		id := c.Submit("#!/bin/sh\necho job says\nexit 3\n", "-N", "pe", "-A", "acct7", "-l", "walltime=00:10:00")
		c.MustRun("qrun", id)
		c.WaitJobState(id, "F", 30*time.Second)
		if got := attr(t, c, id, "Exit_status"); got != "3" {
			t.Fatalf("Exit_status %s, comment %q", got, attr(t, c, id, "comment"))
		}
		pro := argsOf(t, dir, "prologue")
		if len(pro) != 1 || len(pro[0]) != 3 || pro[0][0] != id || pro[0][1] != me.Username {
			t.Errorf("prologue arguments %q, want %s %s <group>", pro, id, me.Username)
		}
		epi := argsOf(t, dir, "epilogue")
		if len(epi) != 1 || len(epi[0]) != 10 {
			t.Fatalf("epilogue arguments %q", epi)
		}
		e := epi[0]
		session := attr(t, c, id, "session_id")
		if e[0] != id || e[1] != me.Username || e[2] != pro[0][2] || e[3] != "pe" || e[4] != session || session == "" ||
			!strings.Contains(e[5], "walltime=00:10:00") || !strings.Contains(e[6], "cput=") || !strings.Contains(e[6], "walltime=") ||
			e[7] != "workq" || e[8] != "acct7" || e[9] != "3" {
			t.Errorf("epilogue arguments %q (session_id %s)", e, session)
		}
		if got := readFile(t, out("pe", id)); got != "prologue says\njob says\nepilogue says\n" {
			t.Errorf("output file %q", got)
		}
		if got := readFile(t, errf("pe", id)); got != "prologue warns\n" {
			t.Errorf("error file %q", got)
		}
	})

	t.Run("prologue exit 1 aborts", func(t *testing.T) {
		os.Remove(filepath.Join(dir, "epilogue.args"))
		pelogScript(t, m, "prologue", dir, "echo no licence left\nexit 1\n", 0o755)
		marker := filepath.Join(dir, "ran")
		id := c.Submit("#!/bin/sh\ntouch "+marker+"\n", "-N", "ab")
		c.MustRun("qrun", id)
		c.WaitJobState(id, "F", 30*time.Second)
		if got, comment := attr(t, c, id, "Exit_status"), attr(t, c, id, "comment"); got != "-2" || !strings.Contains(comment, "Job aborted: prologue ") || !strings.Contains(comment, "exited 1") {
			t.Errorf("Exit_status %s, comment %q; want -2 and the prologue named", got, comment)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the script ran after its prologue exited 1")
		}
		if got := readFile(t, out("ab", id)); got != "no licence left\nepilogue says\n" {
			t.Errorf("output file %q", got)
		}
		if got := readFile(t, errf("ab", id)); !strings.Contains(got, "PBS: job aborted: prologue") {
			t.Errorf("error file %q", got)
		}
		if epi := argsOf(t, dir, "epilogue"); len(epi) != 1 || len(epi[0]) != 10 || epi[0][9] != "-2" {
			t.Errorf("epilogue arguments %q: want it run with exit status -2", epi)
		}
		if !strings.Contains(m.Log(), "prologue failed") {
			t.Errorf("the mom's log does not say the prologue failed:\n%s", m.Log())
		}
	})

	t.Run("prologue exit 2 requeues", func(t *testing.T) {
		pelogScript(t, m, "prologue", dir, "exit 2\n", 0o755)
		// Not rerunnable: it never ran, so it goes back all the same.
		id := c.Submit("#!/bin/sh\ntrue\n", "-r", "n")
		c.MustRun("qrun", id)
		requeued(t, id, "exited 2")
	})

	t.Run("writable prologue refused", func(t *testing.T) {
		pelogScript(t, m, "prologue", dir, "exit 0\n", 0o775)
		id := c.Submit("#!/bin/sh\ntrue\n")
		c.MustRun("qrun", id)
		requeued(t, id, "writable by its group or others")
	})

	t.Run("prologalarm", func(t *testing.T) {
		pelogScript(t, m, "prologue", dir, "sleep 60\n", 0o755)
		id := c.Submit("#!/bin/sh\ntrue\n")
		c.MustRun("qrun", id)
		requeued(t, id, "killed after running 3s ($prologalarm)")
	})

	t.Run("jobtype", func(t *testing.T) {
		pelogScript(t, m, "prologue", dir, "exit 1\n", 0o755)
		pelogScript(t, m, "prologue.gpu", dir, "echo gpu prologue\n", 0o755)
		id := torqueSubmit(t, c, "#!/bin/sh\necho job\n", "jobtype", "gpu", "-N", "typed", "-T", "gpu")
		c.MustRun("qrun", id)
		c.WaitJobState(id, "F", 30*time.Second)
		if got := readFile(t, out("typed", id)); got != "gpu prologue\njob\nepilogue says\n" {
			t.Errorf("output file %q", got)
		}
	})

	t.Run("torque user prologue and epilogue", func(t *testing.T) {
		pelogScript(t, m, "prologue", dir, "echo prologue says\n", 0o755)
		pelogScript(t, m, "prologue.user", dir, "echo prologue.user says\n", 0o755)
		pelogScript(t, m, "epilogue.user", dir, "echo epilogue.user says\n", 0o755)
		defer os.Remove(filepath.Join(m.Home, "mom_priv", "prologue.user"))
		defer os.Remove(filepath.Join(m.Home, "mom_priv", "epilogue.user"))
		id := c.Submit("#!/bin/sh\necho job\n", "-N", "user", "-A", "acct7")
		c.MustRun("qrun", id)
		c.WaitJobState(id, "F", 30*time.Second)
		if got := readFile(t, out("user", id)); got != "prologue says\nprologue.user says\njob\nepilogue.user says\nepilogue says\n" {
			t.Errorf("output file %q", got)
		}
		if pu := argsOf(t, dir, "prologue.user"); len(pu) != 1 || len(pu[0]) != 7 || pu[0][0] != id || pu[0][3] != "user" || pu[0][5] != "workq" || pu[0][6] != "acct7" {
			t.Errorf("prologue.user arguments %q", pu)
		}
	})

	t.Run("mom killed during the epilogue", func(t *testing.T) {
		os.Remove(filepath.Join(m.Home, "mom_priv", "prologue"))
		started, done := filepath.Join(dir, "epi.started"), filepath.Join(dir, "epi.done")
		pelogScript(t, m, "epilogue", dir, "touch "+started+"\nsleep 2\ntouch "+done+"\n", 0o755)
		id := c.Submit("#!/bin/sh\nexit 5\n")
		c.MustRun("qrun", id)
		waitFor(t, "the epilogue to start", 20*time.Second, func() bool { _, err := os.Stat(started); return err == nil })
		m.Kill(syscall.SIGKILL)
		m.Start()
		// The job ends only once its epilogue has: whenever it shows F,
		// the epilogue's last step is done.
		waitFor(t, "the job's end", 30*time.Second, func() bool {
			st, _ := c.JobAttr(id, "job_state")
			if st != "F" {
				return false
			}
			if _, err := os.Stat(done); err != nil {
				t.Fatalf("the job ended before its epilogue did")
			}
			return true
		})
		if got := attr(t, c, id, "Exit_status"); got != "5" {
			t.Errorf("Exit_status %s", got)
		}
	})
}

// Keep_Files (qsub -k): o and e keep those streams in the owner's home
// directory on the execution host, as <name>.o<seq>, instead of their
// paths; d writes them straight to their paths.
func TestKeepFiles(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.AddMom("n1", testcluster.MomOptions{})
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	name := "keep" + strconv.Itoa(os.Getpid())
	script := "#!/bin/sh\necho out\necho err >&2\n"

	id := c.Submit(script, "-N", name, "-k", "o")
	seq := strings.SplitN(id, ".", 2)[0]
	kept := filepath.Join(me.HomeDir, name+".o"+seq)
	t.Cleanup(func() { os.Remove(kept) })
	if got := attr(t, c, id, "Keep_Files"); got != "o" {
		t.Errorf("Keep_Files %q", got)
	}
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 30*time.Second)
	if got := readFile(t, kept); got != "out\n" {
		t.Errorf("kept output %q", got)
	}
	if _, err := os.Stat(filepath.Join(c.Home, name+".o"+seq)); err == nil {
		t.Error("the kept output was also written to Output_Path")
	}
	if got := readFile(t, filepath.Join(c.Home, name+".e"+seq)); got != "err\n" {
		t.Errorf("error file at its path %q", got)
	}

	direct := c.Submit(script, "-N", name, "-k", "doe")
	dseq := strings.SplitN(direct, ".", 2)[0]
	c.MustRun("qrun", direct)
	c.WaitJobState(direct, "F", 30*time.Second)
	if got := readFile(t, filepath.Join(c.Home, name+".o"+dseq)); got != "out\n" {
		t.Errorf("-k doe output at its path %q", got)
	}
	if _, err := os.Stat(filepath.Join(me.HomeDir, name+".o"+dseq)); err == nil {
		os.Remove(filepath.Join(me.HomeDir, name+".o"+dseq))
		t.Error("-k doe kept the output in the home directory")
	}

	for _, bad := range []string{"x", "no", "oo"} {
		if r := c.RunStdin(script, "qsub", "-k", bad); r.Code == 0 || !strings.Contains(r.Stderr, "Keep_Files") {
			t.Errorf("qsub -k %s: %s", bad, r)
		}
	}
}

// Torque's qsub options that act (-K: the job's own kill delay; -n: the
// node exclusively) and those refused at qsub, naming the option (exit 2).
func TestQsubTorqueOptions(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", "set server kill_delay = 120")
	c.AddMom("n1", testcluster.MomOptions{})
	torque := append(c.Env(), "PBS_PERSONALITY=torque")
	id := torqueSubmit(t, c, "#!/bin/sh\ntrap '' TERM\nsleep 300\n", "kill_delay", "1", "-K", "1")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "R", 20*time.Second)
	waitFor(t, "the job's session", 20*time.Second, func() bool { return attr(t, c, id, "session_id") != "" })
	c.MustRun("qdel", id)
	// The job ignores SIGTERM: it ends when SIGKILL follows, a second
	// later rather than the server's two minutes.
	c.WaitJobState(id, "F", 30*time.Second)

	if r := c.RunEnvAs(torque, nil, "#!/bin/sh\ntrue\n", "qsub", "-n"); r.Code != 0 {
		t.Errorf("qsub -n: %s", r)
	} else if pl := attr(t, c, strings.TrimSpace(r.Stdout), "Resource_List.place"); !strings.Contains(pl, "excl") {
		t.Errorf("qsub -n: Resource_List.place = %q, want exclusive placement", pl)
	}

	for _, tt := range []struct{ opt, want string }{
		{"-X", "-X forwards an interactive job's X11 clients: use it with -I"},
		{"-x", "-x is not supported"},
		{"-E", "-E is not supported"},
		{"-L", "-L is not supported"},
		{"-i", "-i is not supported"},
	} {
		args := []string{tt.opt}
		if tt.opt == "-L" || tt.opt == "-i" {
			args = append(args, "2")
		}
		if r := c.RunEnvAs(torque, nil, "#!/bin/sh\ntrue\n", "qsub", args...); r.Code != 2 || !strings.Contains(r.Stderr, tt.want) {
			t.Errorf("qsub %v: %s; want exit 2 and %q", args, r, tt.want)
		}
	}
}
