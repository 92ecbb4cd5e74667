package integration

import (
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

	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/testcluster"
)

// Crash loops (issue 7): short in the normal suite, long with
// GOPBS_SOAK=1 (./scripts/test.sh does not set it).

// rounds is n normally and soak in a soak run.
func rounds(n, soak int) int {
	if os.Getenv("GOPBS_SOAK") != "" {
		return soak
	}
	return n
}

// loops runs f in n goroutines until stop is closed.
func loops(n int, stop chan struct{}, f func()) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					f()
				}
			}
		}()
	}
	return &wg
}

// kill -9 of pbs_server, again and again, under 8 qsub loops: every id a
// qsub printed exists afterwards, and no id was printed twice.
func TestCrashLoopServer(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	var mu sync.Mutex
	printed := map[string]int{}
	stop := make(chan struct{})
	wg := loops(8, stop, func() {
		r := c.RunStdin("#!/bin/sh\n", "qsub")
		if r.Code != 0 {
			time.Sleep(20 * time.Millisecond) // the server is down
			return
		}
		mu.Lock()
		printed[strings.TrimSpace(r.Stdout)]++
		mu.Unlock()
	})
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(printed) }
	for round := 0; round < rounds(4, 20); round++ {
		want := count() + 40
		testcluster.WaitFor(t, fmt.Sprintf("round %d: %d submissions", round, want), 30*time.Second, func() (bool, string) {
			n := count()
			return n >= want, fmt.Sprintf("stalled at %d", n)
		})
		c.KillServer(syscall.SIGKILL)
		c.StartServer()
	}
	close(stop)
	wg.Wait()
	checkAcknowledged(t, printed, c.MustRun("qselect"))
	t.Logf("%d jobs acknowledged across the crashes", len(printed))
}

// checkAcknowledged is the history check of the crash loops: every id a
// qsub printed (with how often) is in qselect's output, none was printed
// twice, and qselect lists none twice. It returns the ids listed.
func checkAcknowledged(t *testing.T, printed map[string]int, qselect string) map[string]int {
	t.Helper()
	listed := map[string]int{}
	for _, id := range strings.Fields(qselect) {
		listed[id]++
	}
	for id, n := range listed {
		if n > 1 {
			t.Errorf("job %s listed %d times", id, n)
		}
	}
	for id, n := range printed {
		if n > 1 {
			t.Errorf("job id %s printed %d times", id, n)
		}
		if listed[id] == 0 {
			t.Errorf("acknowledged job %s is gone", id)
		}
	}
	return listed
}

// latencies records how long commands take while the scheduler misbehaves.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) time(f func() bool) {
	start := time.Now()
	ok := f()
	l.mu.Lock()
	if ok {
		l.d = append(l.d, time.Since(start))
	} else {
		l.d = append(l.d, time.Hour) // a failure counts as too slow
	}
	l.mu.Unlock()
}

func (l *latencies) p99() (time.Duration, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := append([]time.Duration(nil), l.d...)
	sort.Slice(d, func(i, k int) bool { return d[i] < d[k] })
	if len(d) == 0 {
		return 0, 0
	}
	return d[(len(d)*99)/100], len(d)
}

// The scheduler stopped (SIGSTOP) and killed (-9) in the middle of its
// cycles: qsub and qstat keep answering within 1 s (p99), and once a sound
// scheduler is back every job runs, none twice.
func TestCrashLoopScheduler(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{FaultBuild: true})
	m := c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 2")
	c.MustRun("qmgr", "-c", "set server job_history_duration = 3600")
	beats := filepath.Join(c.Home, "beats.log")
	var sub submitter
	var lat latencies
	for round := 0; round < rounds(2, 10); round++ {
		for _, action := range []string{"stop", "crash"} {
			c.SetFault("pbs_sched", fault.SchedMidCycle+"="+action)
			s := c.StartScheduler("pbs_sched")
			// Work arrives: the first cycle that starts a job is cut short.
			sub.run(c, 2, 2, beatScript(beats, 1))
			testcluster.WaitFor(t, fmt.Sprintf("round %d: the scheduler at %s", round, fault.SchedMidCycle), 20*time.Second, func() (bool, string) {
				out := c.SchedStderr("pbs_sched")
				return strings.Contains(out, "fault: "+fault.SchedMidCycle+": "+action), out
			})
			// Meanwhile commands are served as usual.
			stop := make(chan struct{})
			wg := loops(2, stop, func() {
				lat.time(func() bool { return c.RunStdin("#!/bin/sh\n", "qsub", "-h").Code == 0 })
				lat.time(func() bool { return c.Run("qstat").Code == 0 })
			})
			time.Sleep(2 * time.Second) // the window the latencies are measured over
			close(stop)
			wg.Wait()
			if action == "stop" {
				s.Kill(syscall.SIGKILL) // a stopped process still dies of -9
			} else if !s.WaitDown(10 * time.Second) {
				t.Fatalf("round %d: the scheduler did not crash", round)
			}
			// Clear the output so the next round sees its own fault line.
			os.Truncate(filepath.Join(c.Home, "pbs_sched.stderr"), 0)
		}
	}
	p99, n := lat.p99()
	t.Logf("qsub/qstat p99 %v over %d commands with the scheduler stopped or dead", p99, n)
	if p99 > time.Second {
		t.Errorf("qsub/qstat p99 %v with the scheduler stopped or dead, want within 1 s", p99)
	}
	c.SetFault("pbs_sched", "")
	c.StartScheduler("pbs_sched")
	// The held probes are no part of the workload.
	for _, id := range strings.Fields(c.MustRun("qselect", "-h", "u")) {
		c.MustRun("qdel", id)
	}
	checkInvariants(t, c, sub.ids(), beats, m)
}

// kill -9 of the moms while their jobs run, again and again: the jobs keep
// running under their shepherds, finish once each with their exit status.
func TestCrashLoopMoms(t *testing.T) {
	t.Parallel()
	c, n1, n2 := twoMoms(t, "set server scheduler_iteration = 2", "set server job_history_duration = 3600")
	for _, n := range []string{"n1", "n2"} {
		c.MustRun("qmgr", "-c", "set node "+n+" resources_available.ncpus = 2")
	}
	c.StartScheduler("pbs_sched")
	beats := filepath.Join(c.Home, "beats.log")
	var sub submitter
	sub.run(c, 2, 4, beatScript(beats, 4))
	for round := 0; round < rounds(3, 15); round++ {
		for _, m := range []*testcluster.Mom{n1, n2} {
			m.Kill(syscall.SIGKILL)
			m.Start()
		}
		time.Sleep(500 * time.Millisecond) // let the jobs make progress between crashes
	}
	checkInvariants(t, c, sub.ids(), beats, n1, n2)
	for id, j := range qstatJobs(t, c) {
		if j.ExitStatus != nil && *j.ExitStatus != 0 {
			t.Errorf("job %s ended with %d across mom crashes (%s)", id, *j.ExitStatus, j.Comment)
		}
	}
}

// A full disk under the store: qsub fails with a clear error and nothing
// is acknowledged that is not durable; qstat keeps working; once space is
// freed, service resumes and every acknowledged job is there.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	before := c.Submit("#!/bin/sh\n")
	c.KillServer(syscall.SIGTERM)
	priv := filepath.Join(c.Home, "server_priv")
	saved := priv + ".saved"
	if err := os.Rename(priv, saved); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(priv, 0o750)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", priv).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", priv).Run() })
	if out, err := exec.Command("cp", "-a", saved+"/.", priv+"/").CombinedOutput(); err != nil {
		t.Fatalf("copy the store: %v %s", err, out)
	}
	c.StartServer()
	filler := filepath.Join(priv, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	// Submissions until one fails: with the disk full, a commit must.
	var acked []string
	var r testcluster.Result
	big := "#!/bin/sh\n# " + strings.Repeat("x", 32<<10) + "\n"
	for i := 0; i < 200; i++ {
		r = c.RunStdin(big, "qsub")
		if r.Code != 0 {
			break
		}
		acked = append(acked, strings.TrimSpace(r.Stdout))
	}
	if r.Code == 0 {
		t.Fatal("200 submissions succeeded on a full disk")
	}
	if !strings.Contains(strings.ToLower(r.Stderr), "space") {
		t.Errorf("qsub on a full disk does not say why: %s", r)
	}
	if q := c.Run("qstat", before); q.Code != 0 {
		t.Fatalf("qstat with the disk full: %s", q)
	}
	os.Remove(filler)
	after := c.Submit("#!/bin/sh\n")
	for _, id := range append(append(acked, before), after) {
		if _, ok := c.JobAttr(id, "job_state"); !ok {
			t.Errorf("acknowledged job %s is gone", id)
		}
	}
	// And it all survives a restart.
	c.KillServer(syscall.SIGKILL)
	c.StartServer()
	for _, id := range append(append(acked, before), after) {
		if _, ok := c.JobAttr(id, "job_state"); !ok {
			t.Errorf("acknowledged job %s is gone after a restart", id)
		}
	}
}
