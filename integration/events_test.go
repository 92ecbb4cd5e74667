package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// The event stream and qwait on real daemons (README "Watching jobs").

// dialServer connects to the cluster's server socket as the test (root).
func dialServer(t *testing.T, c *testcluster.Cluster) *proto.Client {
	t.Helper()
	cl, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(c.Home, "pbs_server.sock"), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// runningCluster is a cluster that runs jobs: a node of ncpus and the
// scheduler.
func runningCluster(t *testing.T, ncpus int) *testcluster.Cluster {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", fmt.Sprintf("set node n1 resources_available.ncpus = %d", ncpus))
	c.StartScheduler("pbs_sched")
	return c
}

// background is a command left running; wait collects what it did.
type background struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
	code     int
}

// startBackground starts a command of the cluster with env, as cred when
// not nil.
func startBackground(t *testing.T, c *testcluster.Cluster, env []string, cred *testcluster.Cred, name string, args ...string) *background {
	t.Helper()
	b := &background{cmd: exec.Command(filepath.Join(c.Bin, name), args...), done: make(chan struct{})}
	b.cmd.Env = env
	b.cmd.Dir = "/"
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.err
	if cred != nil {
		b.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: cred.UID, Gid: cred.GID}}
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(b.done)
		b.cmd.Wait()
		b.code = b.cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		b.cmd.Process.Kill()
		<-b.done
	})
	return b
}

// wait waits for the command's exit, failing the test after timeout.
func (b *background) wait(t *testing.T, timeout time.Duration) testcluster.Result {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(timeout):
		b.cmd.Process.Kill()
		<-b.done
		t.Fatalf("%s did not exit within %s: stdout %q stderr %q", b.cmd.Path, timeout, b.out.String(), b.err.String())
	}
	return testcluster.Result{Stdout: b.out.String(), Stderr: b.err.String(), Code: b.code}
}

// eventKey is what a change says, for comparing two receptions of it.
func eventKey(e proto.JobEvent) string {
	exit := "-"
	if e.ExitStatus != nil {
		exit = fmt.Sprint(*e.ExitStatus)
	}
	return fmt.Sprintf("%d %s %s %s %s", e.Seq, e.JobID, e.State, e.Substate, exit)
}

// A subscriber reading the stream while pbs_server is killed with
// SIGKILL and started again resumes after the last change it saw: it gets
// every change exactly once (the same, number for number, as a full
// replay from the server afterwards), and a qwait started before the
// crash reports every end once and exits 0.
func TestEventStreamSurvivesServerCrash(t *testing.T) {
	t.Parallel()
	c := runningCluster(t, 4)
	cl := dialServer(t, c)
	st, err := cl.Subscribe(&proto.SubscribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first := st.Reply.Last
	var ids []string
	for i := 0; i < 8; i++ {
		ids = append(ids, c.Submit(fmt.Sprintf("#!/bin/sh\nsleep %d\n", 1+i%3), "-o", "/dev/null", "-e", "/dev/null"))
	}
	qwait := startBackground(t, c, c.Env(), nil, "qwait", ids...)

	var mu sync.Mutex
	var got []proto.JobEvent
	ended := map[string]bool{}
	read := func(st *proto.EventStream) error {
		for {
			evs, err := st.Next()
			if err != nil {
				return err
			}
			mu.Lock()
			for _, e := range evs {
				got = append(got, e)
				if e.State == "F" {
					ended[e.JobID] = true
				}
			}
			mu.Unlock()
		}
	}
	broken := make(chan error, 1)
	go func() { broken <- read(st) }()
	testcluster.WaitFor(t, "a job started", 30*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range got {
			if e.State == "R" {
				return true, ""
			}
		}
		return false, fmt.Sprint(len(got), " events")
	})
	c.KillServer(syscall.SIGKILL)
	if err := <-broken; err == nil {
		t.Fatal("the stream did not end with the server")
	}
	st.Close()
	c.StartServer()
	mu.Lock()
	last := got[len(got)-1].Seq
	mu.Unlock()
	cl = dialServer(t, c)
	st, err = cl.Subscribe(&proto.SubscribeRequest{Resume: true, After: last})
	if err != nil {
		t.Fatalf("resume after %d: %v", last, err)
	}
	defer st.Close()
	go read(st)
	testcluster.WaitFor(t, "every job's end on the stream", 60*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(ended) == len(ids), fmt.Sprint(len(ended), " ended")
	})

	// Each change once, numbered without a gap, and the same as the
	// server's own record of them.
	mu.Lock()
	received := append([]proto.JobEvent(nil), got...)
	mu.Unlock()
	for i, e := range received {
		if e.Seq != first+uint64(i)+1 {
			t.Fatalf("change %d has number %d, want %d (after %d): a change lost or repeated", i, e.Seq, first+uint64(i)+1, first)
		}
	}
	replay := dialServer(t, c)
	all, err := replay.Subscribe(&proto.SubscribeRequest{Resume: true, After: first})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	var kept []proto.JobEvent
	for len(kept) < len(received) {
		evs, err := all.Next()
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, evs...)
	}
	for i := range received {
		if eventKey(received[i]) != eventKey(kept[i]) {
			t.Fatalf("change %d received as %q, kept as %q", i, eventKey(received[i]), eventKey(kept[i]))
		}
	}
	for _, id := range ids {
		n := 0
		for _, e := range received {
			if e.JobID == id && e.State == "F" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s ended %d times on the stream", id, n)
		}
	}

	// qwait followed through the crash: each end once, exit 0.
	r := qwait.wait(t, 60*time.Second)
	if r.Code != 0 || !strings.Contains(r.Stderr, "reconnecting") {
		t.Fatalf("qwait across the crash (it must have lost the stream and come back): %s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	sort.Strings(lines)
	var want []string
	for _, id := range ids {
		want = append(want, id+" 0 F")
	}
	sort.Strings(want)
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("qwait printed:\n%s\nwant:\n%s", r.Stdout, strings.Join(want, "\n"))
	}
}

// With query_other_jobs false a user's stream carries only their own
// jobs' changes, even when they name another's job or ask for everything;
// asking for another user's is refused; with it true they see all. The
// same through the mom's socket (another host's commands).
func TestEventStreamRights(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run commands as another user")
	}
	c := testcluster.New(t, testcluster.Options{})
	m := c.AddMom("n1", testcluster.MomOptions{})
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	c.MustRun("qmgr", "-c", "set server query_other_jobs = False")
	rootJob := c.Submit("#!/bin/sh\n", "-h")
	r := c.RunAs(nobody, "#!/bin/sh\n", "qsub", "-h")
	if r.Code != 0 {
		t.Fatalf("qsub as nobody: %s", r)
	}
	mine := strings.TrimSpace(r.Stdout)
	c.MustRun("qrls", rootJob)
	c.MustRun("qdel", mine)

	// From the first change kept: nobody's two, nothing of root's.
	r = c.RunAs(nobody, "", "qwatch", "-a", "0", "-n", "2")
	if r.Code != 0 {
		t.Fatalf("qwatch as nobody: %s", r)
	}
	if strings.Contains(r.Stdout, rootJob) || strings.Count(r.Stdout, " "+mine+" ") != 2 {
		t.Fatalf("nobody's stream with query_other_jobs false:\n%s", r.Stdout)
	}
	// Naming root's job shows nothing of it: a change of nobody's own
	// (held, then deleted) is the first to come.
	r2 := c.RunAs(nobody, "#!/bin/sh\n", "qsub", "-h")
	late := strings.TrimSpace(r2.Stdout)
	w := startBackground(t, c, c.Env(), &nobody, "qwatch", "-a", "0", "-n", "1", rootJob, late)
	if got := w.wait(t, 30*time.Second); got.Code != 0 || !strings.Contains(got.Stdout, " "+late+" H ") {
		t.Fatalf("qwatch of root's job and nobody's: %s", got)
	}
	if r := c.RunAs(nobody, "", "qwatch", "-u", "root", "-n", "1"); r.Code != int(proto.PBSE_PERM)%256 || !strings.Contains(r.Stderr, "query_other_jobs") {
		t.Fatalf("qwatch -u root as nobody: %s", r)
	}
	// qwait of root's job: not nobody's to see.
	if r := c.RunAs(nobody, "", "qwait", rootJob); r.Code != int(proto.PBSE_PERM)%256 {
		t.Fatalf("qwait of root's job as nobody: %s", r)
	}
	// Root sees everything; through the mom's socket too.
	if r := c.RunEnv(m.Env(), "qwatch", "-a", "0", "-n", "5"); r.Code != 0 || !strings.Contains(r.Stdout, " "+rootJob+" ") || !strings.Contains(r.Stdout, " "+mine+" ") {
		t.Fatalf("root's qwatch through the mom: %s", r)
	}
	c.MustRun("qmgr", "-c", "set server query_other_jobs = True")
	if r := c.RunAs(nobody, "", "qwatch", "-a", "0", "-n", "3"); r.Code != 0 || !strings.Contains(r.Stdout, " "+rootJob+" ") {
		t.Fatalf("nobody's stream with query_other_jobs true: %s", r)
	}
}

// A subscriber that stops reading is cut off with a reason once it falls
// its buffer behind, while qsub stays quick: the server never waits for
// it. (The server learns of the cut at once; the subscriber reads the
// reason after what its socket already held.)
func TestEventStreamSlowSubscriber(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	qsubTimes := func(n int) time.Duration {
		var worst time.Duration
		for i := 0; i < n; i++ {
			start := time.Now()
			c.Submit("#!/bin/sh\n", "-h")
			worst = max(worst, time.Since(start))
		}
		return worst
	}
	quiet := qsubTimes(5)
	slow, err := dialServer(t, c).Subscribe(&proto.SubscribeRequest{Buffer: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	// A flood of changes the subscriber does not read: submissions on
	// connections of their own, while qsub is timed.
	const workers, each = 4, 500
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		cl := dialServer(t, c)
		defer cl.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := cl.Submit(&proto.SubmitRequest{Script: []byte("#!/bin/sh\n"), Attrs: []proto.Attr{{Name: proto.AttrHoldTypes, Value: "u"}}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	busy := qsubTimes(5)
	wg.Wait()
	if busy > 2*time.Second {
		t.Errorf("qsub took up to %s while a subscriber was stuck (quiet: %s)", busy, quiet)
	}
	t.Logf("qsub, worst of 5: quiet %s, during the flood with a stuck subscriber %s", quiet, busy)
	n := 0
	for {
		evs, err := slow.Next()
		if err != nil {
			if proto.CodeOf(err) != proto.PBSE_TOOSLOW || !strings.Contains(err.Error(), "behind") {
				t.Fatalf("the slow subscriber's stream ended with %v after %d changes", err, n)
			}
			break
		}
		n += len(evs)
	}
	if n >= workers*each {
		t.Fatalf("the slow subscriber read all %d changes before its end", n)
	}
	t.Logf("the slow subscriber read %d of %d changes, then: cut off", n, workers*each+5)
	testcluster.WaitFor(t, "the cut logged", 10*time.Second, func() (bool, string) {
		return strings.Contains(c.DailyServerLog(), "event subscriber cut off"), ""
	})
}

// qwait's exit status: 0 when every job exited 0, else the first
// non-zero exit status printed; a finished job needs -x; a job deleted
// while it ran gives 271's low bits.
func TestQwaitExitStatus(t *testing.T) {
	t.Parallel()
	c := runningCluster(t, 4)
	sub := func(script string) string {
		return c.Submit("#!/bin/sh\n"+script+"\n", "-o", "/dev/null", "-e", "/dev/null")
	}
	ok, three, five := sub("exit 0"), sub("exit 3"), sub("exit 5")
	for _, id := range []string{ok, three, five} {
		c.WaitJobState(id, "F", 30*time.Second)
	}
	r := c.Run("qwait", "-x", ok, five, three)
	if r.Code != 5 || r.Stdout != ok+" 0 F\n"+five+" 5 F\n"+three+" 3 F\n" {
		t.Fatalf("qwait -x of jobs ended 0, 5, 3: %s", r)
	}
	if r := c.Run("qwait", "-x", ok); r.Code != 0 || r.Stdout != ok+" 0 F\n" {
		t.Fatalf("qwait -x of a job ended 0: %s", r)
	}
	if r := c.Run("qwait", ok); r.Code != 35 || !strings.Contains(r.Stderr, "Job has finished") {
		t.Fatalf("qwait of a finished job without -x: %s", r)
	}
	if r := c.Run("qwait", "999999"); r.Code != 153 || !strings.Contains(r.Stderr, "Unknown Job Id") {
		t.Fatalf("qwait of an unknown job: %s", r)
	}
	// Live jobs: qwait returns at their end, with the first non-zero.
	later, killed := sub("sleep 2; exit 7"), sub("sleep 300")
	c.WaitJobState(killed, "R", 30*time.Second)
	w := startBackground(t, c, c.Env(), nil, "qwait", later, killed)
	c.WaitJobState(later, "F", 30*time.Second)
	c.MustRun("qdel", killed)
	r = w.wait(t, 30*time.Second)
	if r.Code != 7 || r.Stdout != later+" 7 F\n"+killed+" 271 F\n" {
		t.Fatalf("qwait of a job exiting 7 and one deleted while running: %s", r)
	}
	if r := c.Run("qwait", "-x", killed); r.Code != 271%256 {
		t.Fatalf("qwait of a job deleted while it ran: %s", r)
	}
}

// qwait of an array waits for every subjob, including one deleted while
// it waited (it has no change of its own on the stream), and prints each.
func TestQwaitArray(t *testing.T) {
	t.Parallel()
	c := runningCluster(t, 2)
	id := c.Submit("#!/bin/sh\nsleep 1\n[ \"$PBS_ARRAY_INDEX\" = 2 ] && exit 4\nexit 0\n", "-J", "1-5", "-o", "/dev/null", "-e", "/dev/null")
	seq := strings.TrimSuffix(id, "[]."+c.ServerName())
	sub := func(i int) string { return fmt.Sprintf("%s[%d].%s", seq, i, c.ServerName()) }
	w := startBackground(t, c, c.Env(), nil, "qwait", id)
	c.WaitJobState(sub(1), "R", 30*time.Second)
	c.MustRun("qdel", sub(5)) // waiting: two run at once
	r := w.wait(t, 60*time.Second)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	// The exit status is the first non-zero printed: 4 (subjob 2's), or
	// 271's low bits should qwait have read the deleted subjob first.
	first := 0
	for _, l := range lines {
		if f := strings.Fields(l); len(f) == 3 && f[1] != "0" {
			fmt.Sscan(f[1], &first)
			break
		}
	}
	sort.Strings(lines)
	want := []string{sub(1) + " 0 X", sub(2) + " 4 X", sub(3) + " 0 X", sub(4) + " 0 X", sub(5) + " 271 X"}
	if r.Code != first%256 || r.Code == 0 || strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("qwait of the array: %s\nwant (in any order):\n%s", r, strings.Join(want, "\n"))
	}
	// Once ended, -x reports every subjob at once; one subjob alone too.
	if r := c.Run("qwait", "-x", id); r.Code != 4 || strings.Count(r.Stdout, "\n") != 5 {
		t.Fatalf("qwait -x of the ended array: %s", r)
	}
	if r := c.Run("qwait", "-x", seq+"[3]"); r.Code != 0 || r.Stdout != sub(3)+" 0 X\n" {
		t.Fatalf("qwait -x of one subjob: %s", r)
	}
}

// qwait -t gives up: exit 124, each job not ended listed with its state;
// -t 0 reads once.
func TestQwaitTimeout(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	held := c.Submit("#!/bin/sh\n", "-h")
	start := time.Now()
	r := c.Run("qwait", "-t", "1", held)
	if r.Code != 124 || r.Stdout != held+" - H\n" || !strings.Contains(r.Stderr, "timed out") {
		t.Fatalf("qwait -t 1 of a held job: %s", r)
	}
	if took := time.Since(start); took < time.Second || took > 10*time.Second {
		t.Errorf("qwait -t 1 took %s", took)
	}
	if r := c.Run("qwait", "-t", "0", held); r.Code != 124 || r.Stdout != held+" - H\n" {
		t.Fatalf("qwait -t 0 of a held job: %s", r)
	}
	// A job that ends before the timeout: its status, not 124.
	c.MustRun("qdel", held)
	if r := c.Run("qwait", "-x", "-t", "0", held); r.Code != 15 || r.Stdout != held+" 271 F\n" {
		t.Fatalf("qwait -x -t 0 of a deleted job: %s", r)
	}
}

// The workflow status script of examples/workflow answers from qwait:
// running, success, failed.
func TestWorkflowStatusScript(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.StartScheduler("pbs_sched")
	root, err := testcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "examples", "workflow", "pbs-status")
	status := func(id string) string {
		t.Helper()
		cmd := exec.Command(script, id)
		cmd.Env = c.Env()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pbs-status %s: %v", id, err)
		}
		return strings.TrimSpace(string(out))
	}
	sub := func(body string) string {
		return c.Submit("#!/bin/sh\n"+body+"\n", "-o", "/dev/null", "-e", "/dev/null")
	}
	ok, bad := sub("exit 0"), sub("exit 3")
	c.WaitJobState(ok, "F", 30*time.Second)
	c.WaitJobState(bad, "F", 30*time.Second)
	held := c.Submit("#!/bin/sh\n", "-h")
	for id, want := range map[string]string{ok: "success", bad: "failed", held: "running", "999999": "failed"} {
		if got := status(id); got != want {
			t.Errorf("pbs-status of %s: %q, want %q", id, got, want)
		}
	}
}
