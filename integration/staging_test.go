package integration

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// stageDirs makes a job working directory (the execution side, n1) and a
// directory standing for the other node's disk (n2), open to every user.
func stageDirs(t *testing.T) (work, other string) {
	t.Helper()
	// Not t.TempDir: its parent is closed to other users.
	root, err := os.MkdirTemp("", "gopbs-stage-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	os.Chmod(root, 0o755)
	work, other = filepath.Join(root, "work"), filepath.Join(root, "n2disk")
	for _, d := range []string{work, other} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o777)
	}
	return work, other
}

// Files staged in from the other node's mom are in the working directory
// when the script starts; the outputs are staged out to the other node;
// the staged-in files and the staged-out sources are gone afterwards; the
// file on this node's own name is a local copy. qstat -f shows the lists.
func TestStageInAndOutBetweenMoms(t *testing.T) {
	t.Parallel()
	c, _, n2 := twoMoms(t)
	work, other := stageDirs(t)
	os.WriteFile(filepath.Join(other, "in.dat"), []byte("input from n2\n"), 0o644)
	os.WriteFile(filepath.Join(work, "..", "local.src"), []byte("local input\n"), 0o644)
	script := "#!/bin/sh\ncat in.dat local.dat > seen.txt\necho result > out.dat\n"
	id := c.Submit(script, "-d", work, "-o", work+"/", "-e", work+"/",
		"-W", "stagein=in.dat@n2:"+other+"/in.dat,local.dat@n1:"+filepath.Join(work, "..", "local.src"),
		"-W", "stageout=out.dat@n2:"+other+"/out.dat")
	if got := attr(t, c, id, "stagein"); !strings.Contains(got, "in.dat@n2:"+other+"/in.dat") {
		t.Errorf("stagein shown as %q", got)
	}
	if got := attr(t, c, id, "substate"); got != "11" {
		t.Errorf("queued job with stage-in files has substate %q, want 11", got)
	}
	c.MustRun("qrun", "-H", "n1", id)
	c.WaitJobState(id, "F", 30*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "0" {
		t.Fatalf("Exit_status %q\n%s", got, c.MustRun("qstat", "-fx", id))
	}
	if got := readFile(t, filepath.Join(work, "seen.txt")); got != "input from n2\nlocal input\n" {
		t.Errorf("the script saw %q", got)
	}
	if got := readFile(t, filepath.Join(other, "out.dat")); got != "result\n" {
		t.Errorf("staged-out file holds %q", got)
	}
	for _, gone := range []string{"in.dat", "local.dat", "out.dat"} {
		if _, err := os.Stat(filepath.Join(work, gone)); err == nil {
			t.Errorf("%s is still in the working directory", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "..", "local.src")); err != nil {
		t.Errorf("the local source went: %v", err)
	}
	if log := n2.Log(); !strings.Contains(log, "staging copy served") {
		t.Errorf("n2's mom did not serve the copies:\n%s", log)
	}
}

// A missing source sends the job to W for stagefail_wait with a comment
// naming the file and why (tracejob shows it); once the file exists,
// qrls ends the wait and the job runs.
func TestStageInFailureWaitsThenRuns(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t, "set server stagefail_wait = 900")
	work, other := stageDirs(t)
	id := c.Submit("#!/bin/sh\ncat in.dat\n", "-d", work, "-o", work+"/", "-j", "oe", "-N", "sfail",
		"-W", "stagein=in.dat@n2:"+other+"/missing.dat")
	before := time.Now().Unix()
	c.MustRun("qrun", id)
	c.WaitJobState(id, "W", 30*time.Second)
	comment := attr(t, c, id, "comment")
	if !strings.Contains(comment, "Stage-in failed") || !strings.Contains(comment, other+"/missing.dat") || !strings.Contains(comment, "no such file") {
		t.Errorf("comment %q does not say which file failed and why", comment)
	}
	if got := attr(t, c, id, "substate"); got != "37" {
		t.Errorf("substate %q, want 37 (STAGEFAIL)", got)
	}
	shown := attr(t, c, id, "Execution_Time")
	et, err := time.ParseInLocation("Mon Jan _2 15:04:05 2006", shown, time.Local)
	if err != nil || et.Unix() < before+890 || et.Unix() > time.Now().Unix()+910 {
		t.Errorf("Execution_Time %q, want about now + 900 s", shown)
	}
	if out := c.MustRun("qmgr", "-c", "print server"); !strings.Contains(out, "set server stagefail_wait = 900") {
		t.Errorf("qmgr print server lacks stagefail_wait:\n%s", out)
	}
	if out := c.MustRun("tracejob", id); !strings.Contains(out, "missing.dat") {
		t.Errorf("tracejob does not show the failure:\n%s", out)
	}
	os.WriteFile(filepath.Join(other, "missing.dat"), []byte("here now\n"), 0o644)
	c.MustRun("qrls", id)
	c.WaitJobState(id, "Q", 10*time.Second)
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 30*time.Second)
	seq := strings.SplitN(id, ".", 2)[0]
	if got := readFile(t, filepath.Join(work, "sfail.o"+seq)); got != "here now\n" {
		t.Errorf("output %q", got)
	}
}

// A path with blanks, quotes and a leading dash is copied as a name, in
// and out, never read as an option or by a shell.
func TestStagePathIsAName(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	work, other := stageDirs(t)
	odd := `-odd "q" name`
	os.WriteFile(filepath.Join(other, odd), []byte("odd input\n"), 0o644)
	id := c.Submit("#!/bin/sh\ncat -- '"+odd+"' > './"+odd+".out'\n", "-d", work, "-o", work+"/", "-e", work+"/",
		"-W", "stagein='"+odd+"@n2:"+other+"/"+odd+"'",
		"-W", "stageout='"+odd+".out@n2:"+other+"/"+odd+".out'")
	c.MustRun("qrun", "-H", "n1", id)
	c.WaitJobState(id, "F", 30*time.Second)
	if got := readFile(t, filepath.Join(other, odd+".out")); got != "odd input\n" {
		t.Errorf("copied back %q\n%s", got, c.MustRun("qstat", "-fx", id))
	}
	if ents, _ := os.ReadDir(work); len(ents) > 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("working directory holds %q (leftovers of the copy?)", names)
	}
}

// A stage-out to a directory the owner cannot write fails into the spool
// on the execution host, which the owner can read; the comment and the
// accounting record say where. A stage-in of another user's private file
// fails as that user would: the copy runs as the job's owner.
func TestStageOutFailureSpoolAndOwnerRights(t *testing.T) {
	t.Parallel()
	c, n1, _ := twoMoms(t)
	u := newUsers(t, "stg")[0]
	work, other := stageDirs(t)
	locked := filepath.Join(other, "locked")
	os.Mkdir(locked, 0o755) // root's: the user cannot write here
	secret := filepath.Join(other, "secret")
	os.WriteFile(secret, []byte("root only\n"), 0o600)

	id := submitAs(t, c, u, work, "#!/bin/sh\necho precious > out.dat\n", "-d", work,
		"-W", "stageout=out.dat@n2:"+locked+"/out.dat")
	c.MustRun("qrun", "-H", "n1", id)
	c.WaitJobState(id, "F", 30*time.Second)
	spool := filepath.Join(n1.Home, "undelivered", id)
	comment := attr(t, c, id, "comment")
	if !strings.Contains(comment, "stage-out of out.dat@n2:"+locked+"/out.dat failed") || !strings.Contains(comment, "kept in "+spool) {
		t.Errorf("comment %q", comment)
	}
	if got := readFile(t, filepath.Join(spool, "out.dat")); got != "precious\n" {
		t.Errorf("spooled file holds %q", got)
	}
	for _, p := range []string{spool, filepath.Join(spool, "out.dat")} {
		fi, err := os.Stat(p)
		if err != nil || fi.Sys().(*syscall.Stat_t).Uid != u.cred.UID {
			t.Errorf("%s is not the owner's: %v", p, err)
		}
	}
	acct := c.WaitAccounting(";E;")
	if !strings.Contains(acct, "stageout_spool="+spool) {
		t.Errorf("E record lacks stageout_spool:\n%s", acct)
	}

	id2 := submitAs(t, c, u, work, "#!/bin/sh\ncat stolen\n", "-d", work, "-W", "stagein=stolen@n2:"+secret)
	c.MustRun("qrun", "-H", "n1", id2)
	c.WaitJobState(id2, "W", 30*time.Second)
	if comment := attr(t, c, id2, "comment"); !strings.Contains(comment, "permission denied") {
		t.Errorf("stage-in of another user's file: comment %q", comment)
	}
	if _, err := os.Stat(filepath.Join(work, "stolen")); err == nil {
		t.Errorf("another user's private file was copied")
	}
}

// The scheduler's early stage-in: the job the backfilling reservation
// protects has its files copied to the node it is expected to run on
// while it waits (substate 16, stagein_node); when it runs there the copy
// is skipped (a source changed afterwards is not copied again).
func TestEarlyStageInThenRunSkipsCopy(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t, "set server scheduling = False")
	for _, n := range []string{"n1", "n2"} {
		c.MustRun("qmgr", "-c", "set node "+n+" resources_available.ncpus = 1")
	}
	work, other := stageDirs(t)
	os.WriteFile(filepath.Join(other, "in.dat"), []byte("original\n"), 0o644)
	flag := filepath.Join(work, "flag")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	big := c.Submit("#!/bin/sh\nwhile [ ! -f "+flag+" ]; do sleep 0.2; done\n", "-d", work, "-o", work+"/", "-e", work+"/",
		"-l", "select=2:ncpus=1", "-l", "place=scatter", "-l", "walltime=00:02:00")
	c.WaitJobState(big, "R", 30*time.Second)
	id := c.Submit("#!/bin/sh\ncat in.dat > seen.txt\n", "-d", work, "-o", work+"/", "-e", work+"/",
		"-l", "select=1:ncpus=1", "-l", "walltime=00:00:30", "-W", "stagein=in.dat@n2:"+other+"/in.dat")
	waitAttr(t, c, id, "substate", func(v string) bool { return v == "16" }, 30*time.Second)
	node := attr(t, c, id, "stagein_node")
	if node != "n1" && node != "n2" {
		t.Fatalf("stagein_node %q", node)
	}
	if got := readFile(t, filepath.Join(work, "in.dat")); got != "original\n" {
		t.Fatalf("staged early: %q", got)
	}
	if got := attr(t, c, id, "job_state"); got != "Q" {
		t.Fatalf("an early stage-in ran the job: %s", got)
	}
	os.WriteFile(filepath.Join(other, "in.dat"), []byte("changed after the stage-in\n"), 0o644)
	os.WriteFile(flag, nil, 0o644)
	c.WaitJobState(id, "F", 60*time.Second)
	if got := attr(t, c, id, "exec_host"); !strings.HasPrefix(got, node+"/") {
		t.Errorf("ran on %q, not where its files were (%s)", got, node)
	}
	if got := readFile(t, filepath.Join(work, "seen.txt")); got != "original\n" {
		t.Errorf("the run copied the file again: the script saw %q", got)
	}
	if log := c.SchedLog(); !strings.Contains(log, "early stage-in asked for") {
		t.Errorf("the scheduler's log does not show the request:\n%s", log)
	}
}

// An early stage-in survives restarts (DESIGN §6): the source's mom is
// stopped so the copy hangs; the copying mom is killed and restarted, then
// the server; the job stays queued in STAGEIN throughout, the restarted
// mom copies again once the source answers, the server records STAGECMP,
// and the job then runs once.
func TestEarlyStageInSurvivesRestarts(t *testing.T) {
	t.Parallel()
	c, n1, n2 := twoMoms(t, "set server scheduling = False")
	work, other := stageDirs(t)
	os.WriteFile(filepath.Join(other, "in.dat"), []byte("survived\n"), 0o644)
	id := c.Submit("#!/bin/sh\ncat in.dat\n", "-d", work, "-o", work+"/", "-j", "oe", "-N", "restage",
		"-W", "stagein=in.dat@n2:"+other+"/in.dat")
	syscall.Kill(n2.Pid(), syscall.SIGSTOP)
	defer syscall.Kill(n2.Pid(), syscall.SIGCONT)
	cl, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(c.Home, "pbs_server.sock")})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.StageInJob(id, "n1"); err != nil {
		t.Fatalf("stage-in request: %v", err)
	}
	cl.Close()
	if got := attr(t, c, id, "substate"); got != "14" {
		t.Fatalf("substate %q while the copy hangs, want 14", got)
	}
	n1.Kill(syscall.SIGKILL)
	n1.Start()
	c.KillServer(syscall.SIGKILL)
	c.StartServer()
	c.WaitNodeState("n1", "free", 20*time.Second)
	if got := attr(t, c, id, "substate"); got != "14" || attr(t, c, id, "job_state") != "Q" {
		t.Fatalf("after the restarts: %s", c.MustRun("qstat", "-f", id))
	}
	syscall.Kill(n2.Pid(), syscall.SIGCONT)
	waitAttr(t, c, id, "substate", func(v string) bool { return v == "16" }, 60*time.Second)
	if got := readFile(t, filepath.Join(work, "in.dat")); got != "survived\n" {
		t.Fatalf("staged %q", got)
	}
	c.MustRun("qrun", "-H", "n1", id)
	c.WaitJobState(id, "F", 30*time.Second)
	seq := strings.SplitN(id, ".", 2)[0]
	if got := readFile(t, filepath.Join(work, "restage.o"+seq)); got != "survived\n" {
		t.Errorf("output %q", got)
	}
	if got := attr(t, c, id, "run_count"); got != "1" {
		t.Errorf("run_count %q", got)
	}
}

// A FIFO as a staging source is refused at once with its type, never
// waited on (issue 19 item 3: the copy blocked in open() for good, the job
// stayed R, qdel could not end it, and a serving mom lost a connection
// slot to each such copy): as a stage-in source on another node (served
// by its mom) or on this one, the job goes to W with a comment that says
// so; as a stage-out source, the job ends with the failure in its
// comment. The moms keep working: a job staging a regular file from the
// same mom runs, and qdel ends a job waiting after such a failure.
func TestStageFifoSourceRefused(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t, "set server scheduling = False")
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 8") // the four at once
	work, other := stageDirs(t)
	remote, local := filepath.Join(other, "fifo"), filepath.Join(work, "..", "fifo")
	for _, p := range []string{remote, local} {
		if err := syscall.Mkfifo(p, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(other, "in.dat"), []byte("regular\n"), 0o644)
	opts := []string{"-d", work, "-o", work + "/", "-j", "oe"}
	inRemote := c.Submit("#!/bin/sh\ncat in.dat\n", append(opts, "-W", "stagein=in.dat@n2:"+remote)...)
	inLocal := c.Submit("#!/bin/sh\ncat in.dat\n", append(opts, "-W", "stagein=in.dat@n1:"+local)...)
	outRemote := c.Submit("#!/bin/sh\nmkfifo out1\n", append(opts, "-W", "stageout=out1@n2:"+other+"/out1")...)
	outLocal := c.Submit("#!/bin/sh\nmkfifo out2\n", append(opts, "-W", "stageout=out2@n1:"+work+"/../out2")...)
	for _, id := range []string{inRemote, inLocal, outRemote, outLocal} {
		c.MustRun("qrun", "-H", "n1", id)
	}
	for id, path := range map[string]string{inRemote: remote, inLocal: local} {
		c.WaitJobState(id, "W", 30*time.Second)
		if comment := attr(t, c, id, "comment"); !strings.Contains(comment, "Stage-in failed") || !strings.Contains(comment, "not a regular file: fifo") || !strings.Contains(comment, filepath.Base(path)) {
			t.Errorf("stage-in from a FIFO: comment %q", comment)
		}
	}
	for id, name := range map[string]string{outRemote: "out1", outLocal: "out2"} {
		c.WaitJobState(id, "F", 30*time.Second)
		if comment := attr(t, c, id, "comment"); !strings.Contains(comment, "stage-out of "+name+"@") || !strings.Contains(comment, "not a regular file: fifo") {
			t.Errorf("stage-out of a FIFO: comment %q", comment)
		}
	}
	ok := c.Submit("#!/bin/sh\ncat in.dat\n", append(opts, "-N", "fine", "-W", "stagein=in.dat@n2:"+other+"/in.dat")...)
	c.MustRun("qrun", "-H", "n1", ok)
	c.WaitJobState(ok, "F", 30*time.Second)
	if got := attr(t, c, ok, "Exit_status"); got != "0" {
		t.Errorf("a job staging a regular file afterwards: Exit_status %q\n%s", got, c.MustRun("qstat", "-fx", ok))
	}
	c.MustRun("qdel", inRemote)
	c.WaitJobState(inRemote, "F", 10*time.Second)
}

// A qdel during a stage-in wins over what the stage-in then does (issue
// 19 item 4: the source's mom stopped, the qdel answered 0, the stage-in
// failed, the job went to W and later ran). With n2, the source, stopped,
// a job being staged in on n1 is deleted (qdel, and qdel -W force): it
// ends F with the Exit_status of a delete, its script never runs, and
// its run_count stays 1.
func TestDeleteDuringStageInWins(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.MustRun("qmgr", "-c", "set server stagefail_wait = 2")
	c.AddMom("n1", testcluster.MomOptions{Config: "$stage_timeout 5\n"})
	n2 := c.AddMom("n2", testcluster.MomOptions{})
	work, other := stageDirs(t)
	os.WriteFile(filepath.Join(other, "in.dat"), []byte("input\n"), 0o644)
	syscall.Kill(n2.Pid(), syscall.SIGSTOP)
	defer syscall.Kill(n2.Pid(), syscall.SIGCONT)
	for _, qdel := range [][]string{{}, {"-W", "force"}} {
		ran := filepath.Join(work, "ran"+strings.Join(qdel, ""))
		id := c.Submit("#!/bin/sh\necho ran > "+ran+"\n", "-d", work, "-o", work+"/", "-j", "oe",
			"-W", "stagein=in.dat@n2:"+other+"/in.dat")
		c.MustRun("qrun", "-H", "n1", id)
		waitAttr(t, c, id, "substate", func(v string) bool { return v == "15" }, 10*time.Second)
		c.MustRun("qdel", append(qdel, id)...)
		c.WaitJobState(id, "F", 30*time.Second)
		if got := attr(t, c, id, "Exit_status"); got != "271" {
			t.Errorf("qdel %v during a stage-in: Exit_status %q, want 271\n%s", qdel, got, c.MustRun("qstat", "-fx", id))
		}
		if got := attr(t, c, id, "run_count"); got != "1" {
			t.Errorf("qdel %v: run_count %q", qdel, got)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Errorf("qdel %v: the deleted job's script ran", qdel)
		}
	}
}

// A mom killed while another mom stages a file out to it leaves the
// partial file (.name.pbs-stage-<hex>) beside the destination; when it
// starts again it removes it (issue 19 item 10: it stayed for good).
func TestPartialFileRemovedWhenMomRestarts(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{FaultBuild: true})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.AddMom("n1", testcluster.MomOptions{})
	c.SetFault("pbs_mom", fault.MomStageReceive+"=crash")
	n2 := c.AddMom("n2", testcluster.MomOptions{})
	c.SetFault("pbs_mom", "")
	work, other := stageDirs(t)
	id := c.Submit("#!/bin/sh\necho result > out.dat\n", "-d", work, "-o", work+"/", "-j", "oe",
		"-W", "stageout=out.dat@n2:"+other+"/out.dat")
	c.MustRun("qrun", "-H", "n1", id)
	if !n2.WaitDown(30 * time.Second) {
		t.Fatalf("n2's mom did not stop at %s\n%s", fault.MomStageReceive, n2.Log())
	}
	partials := func() []string {
		m, _ := filepath.Glob(filepath.Join(other, ".*.pbs-stage-*"))
		return m
	}
	if len(partials()) != 1 {
		t.Fatalf("the killed mom left %v, want one partial file", partials())
	}
	n2.Start()
	// The mom cleans up before it serves: once it says it is ready again.
	testcluster.WaitFor(t, "n2's mom ready again", 20*time.Second, func() (bool, string) {
		return strings.Count(n2.Log(), "mom ready") >= 2, n2.Log()
	})
	if left := partials(); len(left) != 0 {
		t.Errorf("after the mom restarted, partial files remain: %v\n%s", left, n2.Log())
	}
	c.WaitJobState(id, "F", 60*time.Second)
}

// The spool of undeliverable files (PBS_HOME/undelivered) is the mom's:
// another user cannot create a job's directory there before the job's
// stage-out fails (issue 19 item 9: it was world-writable, and a
// directory planted under the job's id kept the owner's file out of the
// spool). The owner's directory is made by the mom and given to the owner.
func TestUndeliveredSpoolCannotBeTaken(t *testing.T) {
	t.Parallel()
	c, n1, _ := twoMoms(t)
	users := newUsers(t, "spo", "spx")
	owner, other := users[0], users[1]
	work, elsewhere := stageDirs(t)
	locked := filepath.Join(elsewhere, "locked")
	os.Mkdir(locked, 0o755) // root's: the owner cannot write here

	spoolRoot := filepath.Join(n1.Home, "undelivered")
	fi, err := os.Lstat(spoolRoot)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || fi.Mode().Perm() != 0o711 || fi.Mode()&(os.ModeSticky|os.ModeSymlink) != 0 {
		t.Errorf("%s: mode %v, uid %d; want root's, 0711", spoolRoot, fi.Mode(), st.Uid)
	}

	id := submitAs(t, c, owner, work, "#!/bin/sh\necho precious > out.dat\n", "-h", "-d", work,
		"-W", "stageout=out.dat@n2:"+locked+"/out.dat")
	spool := filepath.Join(spoolRoot, id)
	// The other user tries to take the job's directory first.
	if r := asUser(other.cred, "mkdir", "-m", "777", spool); r.err == nil || !strings.Contains(r.out, "Permission denied") {
		t.Errorf("another user creating %s: %s", spool, r)
	}
	c.MustRun("qrls", id)
	c.MustRun("qrun", "-H", "n1", id)
	c.WaitJobState(id, "F", 30*time.Second)
	if comment := attr(t, c, id, "comment"); !strings.Contains(comment, "kept in "+spool) {
		t.Errorf("comment %q", comment)
	}
	if got := readFile(t, filepath.Join(spool, "out.dat")); got != "precious\n" {
		t.Errorf("spooled file holds %q", got)
	}
	fi, err = os.Lstat(spool)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || st.Uid != owner.cred.UID || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: mode %v, uid %d; want the owner's (%d), 0700", spool, fi.Mode(), st.Uid, owner.cred.UID)
	}
	// The owner reaches the file; the other user does not.
	if r := asUser(owner.cred, "cat", filepath.Join(spool, "out.dat")); r.err != nil || r.out != "precious\n" {
		t.Errorf("the owner reading the spooled file: %s", r)
	}
	if r := asUser(other.cred, "cat", filepath.Join(spool, "out.dat")); r.err == nil || !strings.Contains(r.out, "Permission denied") {
		t.Errorf("another user read the spooled file: %s", r)
	}
}

// userRun is what asUser saw: the command's output and its error.
type userRun struct {
	out string
	err error
}

func (r userRun) String() string { return fmt.Sprintf("%v: %s", r.err, r.out) }

// asUser runs a system command (not one of the cluster's) as cred.
func asUser(cred testcluster.Cred, name string, args ...string) userRun {
	cmd := exec.Command(name, args...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: cred.UID, Gid: cred.GID}}
	out, err := cmd.CombinedOutput()
	return userRun{out: string(out), err: err}
}

// A staging list names the host as users write it: the machine's host
// name (as `$(hostname)` gives it) or one of its addresses, though its
// mom was registered as localhost (issue 20 item 9: such lists were
// refused at qsub, "host vm runs no pbs_mom of this cluster"). The moms
// report their own host's names and addresses; the file is copied
// locally. A host that is no mom's is still refused, naming it.
func TestStageHostAsUsersWriteIt(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t, "set server scheduling = False")
	name, err := os.Hostname()
	if err != nil || name == "" || name == "localhost" {
		t.Skipf("this machine's host name (%q, %v) says nothing more than localhost", name, err)
	}
	work, other := stageDirs(t)
	os.WriteFile(filepath.Join(other, "a.src"), []byte("by name\n"), 0o644)
	os.WriteFile(filepath.Join(other, "b.src"), []byte("by address\n"), 0o644)
	in := "stagein=a.dat@" + name + ":" + other + "/a.src"
	if ip := nonLoopbackAddr(); ip != "" {
		in += ",b.dat@" + ip + ":" + other + "/b.src"
	} else {
		t.Log("no non-loopback address here: only the name is tried")
		os.WriteFile(filepath.Join(work, "b.dat"), []byte("by address\n"), 0o644)
	}
	script := "#!/bin/sh\ncat a.dat b.dat > seen.txt\necho out > c.dat\n"
	id := c.Submit(script, "-d", work, "-o", work+"/", "-e", work+"/",
		"-W", in, "-W", "stageout=c.dat@"+name+":"+other+"/c.out")
	c.MustRun("qrun", "-H", "n2", id)
	c.WaitJobState(id, "F", 30*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "0" {
		t.Fatalf("Exit_status %q\n%s", got, c.MustRun("qstat", "-fx", id))
	}
	if got := readFile(t, filepath.Join(work, "seen.txt")); got != "by name\nby address\n" {
		t.Errorf("the script saw %q", got)
	}
	if got := readFile(t, filepath.Join(other, "c.out")); got != "out\n" {
		t.Errorf("staged-out file holds %q", got)
	}
	r := c.RunStdin(script, "qsub", "-W", "stagein=x@nosuch.invalid:/tmp/x")
	if r.Code == 0 || !strings.Contains(r.Stderr, "host nosuch.invalid runs no pbs_mom") {
		t.Errorf("a host that is no mom's: %s", r)
	}
}

// nonLoopbackAddr is an address of this machine's that is not loopback,
// "" when it has none.
func nonLoopbackAddr() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	return ""
}
