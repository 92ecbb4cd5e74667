package mom

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// newTestMom is a Mom on a temporary PBS_HOME that is not serving: tests
// call its methods directly.
func newTestMom(t *testing.T) *Mom {
	t.Helper()
	home := t.TempDir()
	key := filepath.Join(home, "cluster.key")
	if _, err := proto.LoadOrCreateKey(key); err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{Home: home, NodeName: "n1", KeyFile: key})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The agent's goroutines (status reports, the watcher, the server's
// requests, obits) share a running job's changing fields. Driving them at
// once lets the race detector check that every access holds mu (issue 7,
// defect 8: session, result and used were read and written without it).
func TestAgentConcurrentAccess(t *testing.T) {
	t.Parallel()
	m := newTestMom(t)
	sleeper := exec.Command("sleep", "30")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	pid := sleeper.Process.Pid
	dir := filepath.Join(m.jobsDir, "1.srv")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	j := &momJob{spec: proto.MomJob{JobID: "1.srv", RunCount: 1}, dir: dir, shepherdPid: pid}
	m.jobs[j.spec.JobID] = j
	if err := shepherd.WriteJSON(dir, shepherd.FileSession, shepherd.Session{Pgid: pid, Start: time.Now().Unix()}, 0o644); err != nil {
		t.Fatal(err)
	}
	// Stand in for a live shepherd: hold its lock until the job ends.
	lock, err := os.OpenFile(filepath.Join(dir, shepherd.FileLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var rounds []*atomic.Int64 // each loop's, to wait until they all ran together
	loop := func(f func()) {
		n := new(atomic.Int64)
		rounds = append(rounds, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					f()
					n.Add(1)
				}
			}
		}()
	}
	loop(func() { m.status() })
	loop(func() { m.checkJob(j, shepherd.SessionsProcesses(map[int]bool{m.shepherdPidOf(j): true})) })
	loop(func() { m.signalJob(&proto.MomSignal{JobID: j.spec.JobID, Signal: "resume"}) })
	loop(func() { m.hasEnded(j) })
	ranTogether := func() (bool, string) {
		var got []int64
		for _, n := range rounds {
			got = append(got, n.Load())
		}
		return !slices.ContainsFunc(got, func(n int64) bool { return n < 10 }), fmt.Sprint("rounds ", got)
	}
	testcluster.WaitFor(t, "every loop running", 10*time.Second, ranTogether)
	// The job ends while all of them run.
	if m.hasEnded(j) {
		t.Fatal("the job ended while its shepherd held its lock")
	}
	if err := shepherd.WriteJSON(dir, shepherd.FileResult, shepherd.Result{ExitStatus: 3}, 0o600); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	testcluster.WaitFor(t, "the job's end seen", 5*time.Second, func() (bool, string) { return m.hasEnded(j), "not ended" })
	close(stop)
	wg.Wait()
	st, _ := m.status()
	if len(st.Jobs) != 1 || !st.Jobs[0].Exited || st.Jobs[0].SessionID != pid {
		t.Fatalf("status after the end: %+v", st.Jobs)
	}
	if v := m.view(j); v.result.ExitStatus != 3 {
		t.Fatalf("result %+v, want the shepherd's (exit 3)", v.result)
	}
}

// A job directory that a previous mom left without a shepherd (it stopped
// while starting the job) is given up after the grace, with an exit
// status the server requeues; a shepherd that starts late then finds the
// result and does not run the job.
func TestNeverStartedJobGivenUp(t *testing.T) {
	t.Parallel()
	m := newTestMom(t)
	dir := filepath.Join(m.jobsDir, "2.srv")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := shepherd.WriteJSON(dir, shepherd.FileJob, proto.MomJob{JobID: "2.srv", RunCount: 1}, 0o600); err != nil {
		t.Fatal(err)
	}
	j := &momJob{spec: proto.MomJob{JobID: "2.srv", RunCount: 1}, dir: dir}
	m.jobs[j.spec.JobID] = j
	if m.checkJob(j, nil) {
		t.Fatal("given up within the grace: a shepherd forked just before the crash may still start")
	}
	old := time.Now().Add(-2 * shepherdStartGrace)
	os.Chtimes(filepath.Join(dir, shepherd.FileJob), old, old)
	if !m.checkJob(j, nil) {
		t.Fatal("not given up after the grace")
	}
	if v := m.view(j); v.result.ExitStatus != proto.JobExecRetry {
		t.Fatalf("result %+v, want JobExecRetry", v.result)
	}
	if code := shepherd.Run(dir); code != 0 {
		t.Fatalf("late shepherd: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir, shepherd.FileSession)); err == nil {
		t.Fatal("a late shepherd ran the job the mom gave up")
	}
}

// A signal that comes just before the shepherd writes the session file
// waits for it rather than failing (the job may already be running).
func TestWaitSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	go func() {
		time.Sleep(100 * time.Millisecond) // the shepherd writes it late: the case under test
		shepherd.WriteJSON(dir, shepherd.FileSession, shepherd.Session{Pgid: 42}, 0o644)
	}()
	var s shepherd.Session
	if err := waitSession(dir, &s, 5*time.Second); err != nil || s.Pgid != 42 {
		t.Fatalf("waitSession: %v, %+v", err, s)
	}
	if err := waitSession(t.TempDir(), &s, 50*time.Millisecond); err == nil {
		t.Fatal("no session file: want an error after the wait")
	}
}

// A job is forgotten once: a late second forget (the obit's, after a new
// run of the same job took its directory) leaves the new run's directory
// and TMPDIR alone.
func TestForgetTwiceLeavesTheNextRunAlone(t *testing.T) {
	t.Parallel()
	m := newTestMom(t)
	mc := *m.mc()
	mc.TmpDir = t.TempDir() // $tmpdir: no TMPDIR of the host's /tmp
	m.live.Store(&liveConfig{conf: &mc, resources: m.live.Load().resources})
	dir := filepath.Join(m.jobsDir, "1.srv")
	finishedJobDir(t, dir)
	old := &momJob{spec: proto.MomJob{JobID: "1.srv", RunCount: 1}, dir: dir, ownerUID: 0, tmpDir: shepherd.NewTmpDir(m.shepherdSettings(), "1.srv")}
	m.jobs["1.srv"] = old
	m.forget(old)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the first forget left the directory: %v", err)
	}
	// The next run's directory, at the same path.
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, shepherd.FileScript), []byte("run 2"), 0o700)
	// Its TMPDIR, at the first run's name at worst.
	tmp := old.tmpDir
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	m.forget(old)
	if b, err := os.ReadFile(filepath.Join(dir, shepherd.FileScript)); err != nil || string(b) != "run 2" {
		t.Errorf("a second forget of the first run touched the next run's directory: %q %v", b, err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("a second forget of the first run removed the next run's TMPDIR: %v", err)
	}
}
