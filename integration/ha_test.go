package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
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
)

// A replicated server group of three members on this machine (issue 23):
// kill -9 of the leader, round after round, under 6 qsub loops spread
// over the members' sockets. Every id a qsub printed exists exactly once
// afterwards, none was printed twice, and a surviving member accepts
// qsub again within seconds of each kill. Then two members down: qsub
// fails with a plain "no quorum" error, and nothing it tried is there
// once the group is whole again.
func TestGroupFailover(t *testing.T) {
	t.Parallel()
	g := testcluster.NewGroup(t, 3)
	g.Members[0].MustRun("qmgr", "-c", "set server scheduling = False")
	h := submitThroughMembers(g, 6)
	mu, printed, count := &h.mu, h.printed, h.count
	var failovers []time.Duration
	for round := 0; round < rounds(3, 20); round++ {
		want := count() + 30
		testcluster.WaitFor(t, fmt.Sprintf("round %d: %d submissions", round, want), 60*time.Second, func() (bool, string) {
			n := count()
			return n >= want, fmt.Sprintf("stalled at %d", n)
		})
		leader := -1
		testcluster.WaitFor(t, "a leader", 20*time.Second, func() (bool, string) {
			leader = g.Leader((round + 1) % 3)
			return leader >= 0, ""
		})
		other := g.Members[(leader+1)%3]
		killed := time.Now()
		g.Members[leader].KillServer(syscall.SIGKILL)
		testcluster.WaitFor(t, "qsub after the leader's kill", 30*time.Second, func() (bool, string) {
			r := other.RunStdin("#!/bin/sh\n", "qsub")
			if r.Code == 0 {
				mu.Lock()
				printed[strings.TrimSpace(r.Stdout)]++
				mu.Unlock()
			}
			return r.Code == 0, r.Stderr
		})
		failovers = append(failovers, time.Since(killed))
		g.Members[leader].StartServer()
	}
	h.stop()
	sort.Slice(failovers, func(a, b int) bool { return failovers[a] < failovers[b] })
	t.Logf("failover (kill -9 of the leader to a qsub accepted by another member): %v", failovers)

	listed := checkAcknowledged(t, printed, g.Members[0].MustRun("qselect"))
	t.Logf("%d jobs acknowledged across %d failovers", len(printed), len(failovers))

	// Two of three down: no quorum, said plainly, nothing acknowledged.
	leader := g.Leader(0)
	if leader < 0 {
		t.Fatal("no leader before the quorum test")
	}
	survivor := (leader + 1) % 3
	for i := range g.Members {
		if i != survivor {
			g.Members[i].KillServer(syscall.SIGKILL)
		}
	}
	before := len(listed)
	testcluster.WaitFor(t, "qsub refused for want of a quorum", 20*time.Second, func() (bool, string) {
		r := g.Members[survivor].RunStdin("#!/bin/sh\n", "qsub")
		if r.Code == 0 {
			t.Errorf("qsub acknowledged %s without a quorum", strings.TrimSpace(r.Stdout))
			return true, ""
		}
		return strings.Contains(r.Stderr, "No quorum"), r.Stderr
	})
	start := time.Now()
	r := g.Members[survivor].RunStdin("#!/bin/sh\n", "qsub")
	if r.Code == 0 || !strings.Contains(r.Stderr, "No quorum") || time.Since(start) > 2*time.Second {
		t.Errorf("qsub without a quorum: code %d after %v: %q, want an immediate No quorum", r.Code, time.Since(start), r.Stderr)
	}
	for i := range g.Members {
		if i != survivor {
			g.Members[i].StartServer()
		}
	}
	if n := len(strings.Fields(g.Members[survivor].MustRun("qselect"))); n != before {
		t.Errorf("%d jobs after the quorum loss, want %d", n, before)
	}
}

// A job running when its group's leader is killed keeps running, is not
// started again, and its end (with its exit status) reaches the new
// leader: the mom follows the leader (PBS_SERVER_PEERS) and each member
// calls the scheduler beside it.
func TestGroupRunningJobSurvivesFailover(t *testing.T) {
	t.Parallel()
	g := testcluster.NewGroup(t, 3)
	for _, m := range g.Members {
		m.StartScheduler("pbs_sched")
	}
	c := g.Members[0]
	c.MustRun("qmgr", "-c", "set server job_history_enable = True")
	c.AddMom("n1", testcluster.MomOptions{Conf: "PBS_SERVER_PEERS=" + g.Peers + "\n"})
	id := c.Submit("#!/bin/sh\nsleep 6\nexit 3\n")
	c.WaitJobState(id, "R", 30*time.Second)
	leader := g.Leader(0)
	if leader < 0 {
		t.Fatal("no leader")
	}
	g.Members[leader].KillServer(syscall.SIGKILL)
	other := g.Members[(leader+1)%3]
	testcluster.WaitFor(t, "a new leader", 20*time.Second, func() (bool, string) {
		l := g.Leader((leader + 1) % 3)
		return l >= 0 && l != leader, ""
	})
	if st, _ := other.JobAttr(id, "job_state"); st != "R" {
		t.Errorf("job %s is %q right after the failover, want still R", id, st)
	}
	other.WaitJobState(id, "F", 60*time.Second)
	if v, _ := other.JobAttr(id, "Exit_status"); v != "3" {
		t.Errorf("Exit_status %q after the failover, want 3", v)
	}
	if v, _ := other.JobAttr(id, "run_count"); v != "1" {
		t.Errorf("run_count %q: the job was started again", v)
	}
}

// submitRate is B1's measurement (pbsbench): loops of `qsub -h` for d,
// through c's socket; it returns acknowledged submissions per second.
func submitRate(t *testing.T, c *testcluster.Cluster, n int, d time.Duration) float64 {
	var mu sync.Mutex
	ok := 0
	stop := make(chan struct{})
	start := time.Now()
	wg := loops(n, stop, func() {
		if c.RunStdin("#!/bin/sh\n", "qsub", "-h").Code == 0 {
			mu.Lock()
			ok++
			mu.Unlock()
		}
	})
	time.Sleep(d) // the measurement's length, not a wait for a condition
	close(stop)
	wg.Wait()
	return float64(ok) / time.Since(start).Seconds()
}

// Durable qsub through a group of three on this machine against a single
// server (pbsbench B1: 16 loops of qsub -h for 10 s). A measurement, not
// a check: run with GOPBS_HA_BENCH=1.
func TestGroupSubmitRate(t *testing.T) {
	t.Parallel()
	if os.Getenv("GOPBS_HA_BENCH") == "" {
		t.Skip("a benchmark: set GOPBS_HA_BENCH=1")
	}
	single := testcluster.New(t, testcluster.Options{})
	one := submitRate(t, single, 16, 10*time.Second)
	single.Stop()
	g := testcluster.NewGroup(t, 3)
	three := submitRate(t, g.Members[g.Leader(0)], 16, 10*time.Second)
	viaFollower := submitRate(t, g.Members[(g.Leader(0)+1)%3], 16, 10*time.Second)
	t.Logf("B1 qsub -h, 16 loops, 10 s: single server %.0f/s; group of 3 via the leader's socket %.0f/s (%.2fx), via a follower's %.0f/s", one, three, three/one, viaFollower)
}

// Membership while the group runs: a fourth member started with
// -ha-join is added with qmgr, receives the group's state, and shows in
// qstat -Bf; a member is removed the same way.
func TestGroupMembership(t *testing.T) {
	t.Parallel()
	g := testcluster.NewGroup(t, 3)
	c := g.Members[0]
	id := c.Submit("#!/bin/sh\n", "-h")
	fourth, addr := g.AddMember(t)
	c.MustRun("qmgr", "-c", "set server server_members += "+addr)
	members := func(from *testcluster.Cluster) string {
		r := from.Run("qstat", "-Bf", "-1")
		for _, line := range strings.Split(r.Stdout, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "server_members" {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	if m := members(c); !strings.Contains(m, addr) || strings.Count(m, ",") != 3 {
		t.Fatalf("server_members %q after adding %s", m, addr)
	}
	// The new member relays its host's commands and has the group's jobs.
	testcluster.WaitFor(t, "the new member serving the group's jobs", 20*time.Second, func() (bool, string) {
		r := fourth.Run("qstat", id)
		return r.Code == 0, r.Stderr
	})
	if r := c.Run("qmgr", "-c", "set server server_members = 1.2.3.4:5"); r.Code == 0 {
		t.Errorf("server_members set outright: %v", r)
	}
	gone := g.Leader(0)
	var goneAddr string
	for _, f := range strings.Split(members(c), ",") {
		if strings.HasSuffix(f, fmt.Sprintf(":%d", g.Members[(gone+1)%4].BatchPort)) {
			goneAddr = f
		}
	}
	c.MustRun("qmgr", "-c", "set server server_members -= "+goneAddr)
	testcluster.WaitFor(t, "three members again", 20*time.Second, func() (bool, string) {
		m := members(fourth)
		return strings.Count(m, ",") == 2 && !strings.Contains(m, goneAddr), m
	})
}

// A member whose raft log is damaged refuses to start, naming the file
// and the command that rebuilds it; rebuilt with pbs_server -ha-rebuild,
// it is sent the group's state and serves its jobs again.
func TestGroupDamagedLogRebuild(t *testing.T) {
	t.Parallel()
	// Snapshots every 8 entries: the rebuilt member is sent a snapshot
	// (the store copied whole), the log before it being gone.
	g := testcluster.NewGroup(t, 3, "-ha-snapshot-every", "8")
	leader := g.Leader(0)
	victim := g.Members[(leader+1)%3]
	c := g.Members[(leader+2)%3] // a member that stays up throughout
	id := c.Submit("#!/bin/sh\n", "-h")
	victim.KillServer(syscall.SIGKILL)
	log := filepath.Join(victim.Home, "server_priv", "raft", "raft.db")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8192 && i < len(b); i++ {
		b[i] ^= 0x5a // both of bbolt's meta pages
	}
	if err := os.WriteFile(log, b, 0o600); err != nil {
		t.Fatal(err)
	}
	refusal, err := victim.StartServerExpectFailure(20 * time.Second)
	if err == nil || !strings.Contains(refusal, log) || !strings.Contains(refusal, "-ha-rebuild") {
		t.Fatalf("a damaged raft log: err %v, output:\n%s", err, refusal)
	}
	id2 := c.Submit("#!/bin/sh\n", "-h") // committed while the victim is away
	for i := 0; i < 40; i++ {
		c.Submit("#!/bin/sh\n", "-h") // past a few snapshots
	}
	// A snapshot far enough on that the log it compacts (keeping 8
	// trailing entries, -ha-snapshot-every) no longer holds the first
	// entries the rebuilt member lacks: the leader must send the snapshot.
	testcluster.WaitFor(t, "a snapshot on the leader past index 20 (its log compacted)", 20*time.Second, func() (bool, string) {
		snaps, _ := filepath.Glob(filepath.Join(g.Members[leader].Home, "server_priv", "raft", "snapshots", "*", "meta.json"))
		var seen []uint64
		for _, path := range snaps {
			var meta struct{ Index uint64 }
			if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &meta) == nil {
				seen = append(seen, meta.Index)
				if meta.Index > 20 {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("snapshots at %v", seen)
	})
	cmd := exec.Command(filepath.Join(victim.Bin, "pbs_server"), "-ha-rebuild")
	cmd.Env = victim.Env()
	out, err := os.Create(filepath.Join(victim.Home, "rebuild.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	testcluster.WaitFor(t, "the rebuilt member's store catching up", 30*time.Second, func() (bool, string) {
		r := victim.Run("qstat", id, id2)
		return r.Code == 0, r.Stderr
	})
	matches, _ := filepath.Glob(filepath.Join(victim.Home, "server_priv", "raft.set-aside-*"))
	if len(matches) != 1 {
		t.Errorf("the damaged raft state was not set aside: %v", matches)
	}
	// With the leader gone, every commit needs the rebuilt member.
	g.Members[leader].KillServer(syscall.SIGKILL)
	testcluster.WaitFor(t, "a qsub committed with the rebuilt member in the majority", 30*time.Second, func() (bool, string) {
		r := victim.RunStdin("#!/bin/sh\n", "qsub", "-h")
		return r.Code == 0, r.Stderr
	})
	if r := victim.Run("qstat", id, id2); r.Code != 0 {
		t.Errorf("jobs missing after the rebuild: %v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(victim.Home, "rebuild.stderr")); !strings.Contains(string(b), "Installed remote snapshot") {
		t.Errorf("the rebuilt member was not sent a snapshot:\n%.3000s", b)
	}
}

// A leader frozen (SIGSTOP: a hung host, or one cut off) while qsub loops
// run through every member: the others elect a new leader and go on;
// resumed, the old leader finds itself deposed. Its clients got errors
// or ids that exist: every acknowledged job is there exactly once.
func TestGroupPausedLeader(t *testing.T) {
	t.Parallel()
	g := testcluster.NewGroup(t, 3)
	g.Members[0].MustRun("qmgr", "-c", "set server scheduling = False")
	h := submitThroughMembers(g, 6)
	mu, count := &h.mu, h.count
	for round := 0; round < rounds(2, 10); round++ {
		want := count() + 30
		testcluster.WaitFor(t, fmt.Sprintf("round %d: %d submissions", round, want), 60*time.Second, func() (bool, string) {
			return count() >= want, fmt.Sprintf("stalled at %d", count())
		})
		old := -1
		testcluster.WaitFor(t, "a leader", 20*time.Second, func() (bool, string) {
			old = g.Leader(round % 3)
			return old >= 0, ""
		})
		pid := g.Members[old].ServerPid()
		mu.Lock()
		h.skip = old
		mu.Unlock()
		syscall.Kill(pid, syscall.SIGSTOP)
		other := (old + 1) % 3
		testcluster.WaitFor(t, "a new leader while the old one is frozen", 30*time.Second, func() (bool, string) {
			l := g.Leader(other)
			return l >= 0 && l != old, fmt.Sprintf("leader %d", l)
		})
		want = count() + 10
		testcluster.WaitFor(t, "submissions while the old leader is frozen", 30*time.Second, func() (bool, string) {
			return count() >= want, fmt.Sprintf("stalled at %d", count())
		})
		syscall.Kill(pid, syscall.SIGCONT)
		testcluster.WaitFor(t, "the old leader's socket answering again", 30*time.Second, func() (bool, string) {
			r := g.Members[old].Run("qstat", "-B")
			return r.Code == 0, r.Stderr
		})
		mu.Lock()
		h.skip = -1
		mu.Unlock()
	}
	h.stop()
	checkAcknowledged(t, h.printed, g.Members[0].MustRun("qselect"))
	t.Logf("%d jobs acknowledged across frozen leaders", len(h.printed))
}

// memberSubmits are qsub loops spread over a group's members' sockets,
// keeping what each printed.
type memberSubmits struct {
	mu      sync.Mutex
	printed map[string]int
	next    int
	// skip is a member whose socket is not used (its host is frozen,
	// and its commands would hang with it), -1 for none.
	skip int
	done chan struct{}
	wg   *sync.WaitGroup
}

// submitThroughMembers starts n loops of qsub, each through the next
// member's socket in turn.
func submitThroughMembers(g *testcluster.Group, n int) *memberSubmits {
	h := &memberSubmits{printed: map[string]int{}, skip: -1, done: make(chan struct{})}
	h.wg = loops(n, h.done, func() {
		h.mu.Lock()
		if h.next%len(g.Members) == h.skip {
			h.next++
		}
		m := g.Members[h.next%len(g.Members)]
		h.next++
		h.mu.Unlock()
		r := m.RunStdin("#!/bin/sh\n", "qsub")
		if r.Code != 0 {
			time.Sleep(20 * time.Millisecond) // this member is down
			return
		}
		h.mu.Lock()
		h.printed[strings.TrimSpace(r.Stdout)]++
		h.mu.Unlock()
	})
	return h
}

// count is how many ids were printed.
func (h *memberSubmits) count() int { h.mu.Lock(); defer h.mu.Unlock(); return len(h.printed) }

// stop ends the loops and waits for them.
func (h *memberSubmits) stop() {
	close(h.done)
	h.wg.Wait()
}

// The web page and API are served by the leader on its PBS_WEB, and move
// with the leadership: after the leader's kill -9 the new leader's
// listener answers and the old one's is gone.
func TestGroupWebFollowsLeader(t *testing.T) {
	t.Parallel()
	g := testcluster.NewGroupWeb(t, 3)
	get := func(addr string) (int, error) {
		resp, err := http.Get("http://" + addr + "/api/v1/server")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	leader := -1
	testcluster.WaitFor(t, "a leader serving the API", 30*time.Second, func() (bool, string) {
		leader = g.Leader(0)
		if leader < 0 {
			return false, "no leader"
		}
		code, err := get(g.WebAddrs[leader])
		return err == nil && code == 200, fmt.Sprint(code, err)
	})
	for i, addr := range g.WebAddrs {
		if i != leader {
			if _, err := get(addr); err == nil {
				t.Errorf("follower %d serves the web page at %s", i, addr)
			}
		}
	}
	g.Members[leader].KillServer(syscall.SIGKILL)
	next := -1
	testcluster.WaitFor(t, "the new leader serving the API", 30*time.Second, func() (bool, string) {
		next = g.Leader((leader + 1) % 3)
		if next < 0 || next == leader {
			return false, "no new leader"
		}
		code, err := get(g.WebAddrs[next])
		return err == nil && code == 200, fmt.Sprint(code, err)
	})
}

// A group started as README says (issue 30): empty PBS_HOMEs but for
// pbs.conf, the first member alone makes the cluster key (and its auth
// directory, 0700), the key copied to the others, then they start: the
// group elects a leader and takes a job.
func TestGroupFromEmptyHomes(t *testing.T) {
	t.Parallel()
	g := testcluster.NewGroupFromEmptyHomes(t, 3)
	st, err := os.Stat(filepath.Join(g.Members[0].Home, "auth"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("auth directory mode %#o, want 0700", st.Mode().Perm())
	}
	// An election on a loaded host (the whole suite beside it) can take
	// a few rounds; the members' logs say why when none comes.
	testcluster.WaitFor(t, "a leader", 40*time.Second, func() (bool, string) {
		if g.Leader(1) >= 0 {
			return true, ""
		}
		var logs strings.Builder
		for i, m := range g.Members {
			fmt.Fprintf(&logs, "member %d:\n%s\n", i+1, m.ServerLog())
		}
		return false, logs.String()
	})
	g.Members[0].MustRun("qmgr", "-c", "set server scheduling = False")
	id := g.Members[2].Submit("#!/bin/sh\n")
	if got, ok := g.Members[1].JobAttr(id, "job_state"); !ok || got != "Q" {
		t.Errorf("job %s through member 3, read through member 2: state %q", id, got)
	}
}
