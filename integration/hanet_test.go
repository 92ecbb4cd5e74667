package integration

import (
	"fmt"
	"github.com/gopbs/gopbs/internal/testcluster"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// A replicated server group on several hosts (issue 23): three pbs_server
// members, each in its own network namespace with its own PBS_HOME and
// pbs_sched beside it, and two moms on hosts of their own. Under qsub
// loops through every member's host: the leader is cut off from the other
// two, then a follower, then two members are killed. After each, the
// history check of the crash loops (every acknowledged id exists exactly
// once, none printed twice, a finished job keeps its exit status); a job running on a mom throughout runs once
// (its beat log) and keeps its exit status.
func TestGroupPartitions(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostNetns)
	servers := []string{"s1", "s2", "s3"}
	var peers []string
	for _, s := range servers {
		peers = append(peers, "pbs"+s+":15001")
	}
	nc := newNetHosts(t, append(append([]string{}, servers...), "a", "b"), func(h *netHost) string {
		conf := "PBS_SERVER=cluster\nPBS_SERVER_PEERS=" + strings.Join(peers, ",") + "\n"
		if !strings.HasPrefix(h.name, "s") {
			return conf
		}
		return conf + "PBS_SERVER_HOST_NAME=pbs" + h.name + "\n"
	})
	var srv []*netHost
	for _, s := range servers {
		srv = append(srv, nc.hosts[s])
	}
	a, b := nc.hosts["a"], nc.hosts["b"]
	if _, err := proto.LoadOrCreateKey(filepath.Join(srv[0].home, "auth", "cluster.key")); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(srv[0].home, "auth", "cluster.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []*netHost{srv[1], srv[2], a, b} {
		if err := os.WriteFile(filepath.Join(h.home, "auth", "cluster.key"), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	daemons := make([]*exec.Cmd, len(srv))
	for i, h := range srv {
		daemons[i] = nc.start(h, "pbs_server")
	}
	nc.waitFor("the group", 30*time.Second, func() bool { return nc.run(srv[0], "", "qstat", "-B").Code == 0 })
	for _, cmd := range []string{
		"set server acl_roots = root@*",
		"set server scheduling = False",
		"set server job_history_enable = True",
		"create node a Mom=pbsa",
		"create node b Mom=pbsb",
		"set node a resources_available.ncpus = 1",
		"set node b resources_available.ncpus = 1",
	} {
		nc.must(srv[0], "qmgr", "-c", cmd)
	}
	nc.start(a, "pbs_mom")
	nc.start(b, "pbs_mom")
	for _, n := range []string{"a", "b"} {
		nc.waitFor("node "+n+" free", 30*time.Second, func() bool { return nc.nodeStateOn(srv[0], n) == "free" })
	}
	for _, h := range srv {
		nc.start(h, "pbs_sched")
	}
	nc.must(srv[0], "qmgr", "-c", "set server scheduling = True")

	// leader is the member that member i names as leader, -1 if none.
	leader := func(i int) int {
		r := nc.run(srv[i], "", "qstat", "-Bf", "-1")
		for _, line := range strings.Split(r.Stdout, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == proto.AttrServerLeader {
				for j, p := range peers {
					if strings.TrimSpace(v) == p {
						return j
					}
				}
			}
		}
		return -1
	}

	// A finished job, whose exit status every check reads again.
	r := nc.run(srv[0], "#!/bin/sh\nexit 3\n", "qsub")
	if r.Code != 0 {
		t.Fatalf("qsub: %s", r)
	}
	done := strings.TrimSpace(r.Stdout)
	nc.waitFor("the first job finished", 30*time.Second, func() bool { return nc.jobAttrOn(srv[0], done, "job_state") == "F" })

	// A job on a mom throughout: its beats show it never runs twice.
	beats := filepath.Join(nc.dir, "beats.log")
	r = nc.run(srv[0], beatScript(beats, 30), "qsub")
	if r.Code != 0 {
		t.Fatalf("qsub: %s", r)
	}
	job := strings.TrimSpace(r.Stdout)
	nc.waitFor("the beat job running", 30*time.Second, func() bool { return nc.jobAttrOn(srv[0], job, "job_state") == "R" })

	// qsub -h loops, two through each member's host: held jobs, so only
	// the beat job runs.
	var mu sync.Mutex
	printed := map[string]int{}
	// Until members are killed (3), a refused qsub says why: a member
	// that steps down answers what it was asked, never drops the
	// command's connection. (A relayed request whose leader goes away
	// is answered too: "may or may not have been carried out".)
	var dropped []string
	killing := false
	stop := make(chan struct{})
	next := 0
	wg := loops(2*len(srv), stop, func() {
		mu.Lock()
		h := srv[next%len(srv)]
		next++
		mu.Unlock()
		r := nc.run(h, "#!/bin/sh\n", "qsub", "-h")
		if r.Code != 0 {
			if strings.Contains(r.Stderr, "qsub: read reply to") {
				mu.Lock()
				if !killing {
					dropped = append(dropped, h.name+": "+strings.TrimSpace(r.Stderr))
				}
				mu.Unlock()
			}
			time.Sleep(50 * time.Millisecond) // this member has no quorum
			return
		}
		mu.Lock()
		printed[strings.TrimSpace(r.Stdout)]++
		mu.Unlock()
	})
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(printed) }
	progress := func(what string, n int) {
		t.Helper()
		want := count() + n
		nc.waitFor(fmt.Sprintf("%s: %d submissions", what, want), 60*time.Second, func() bool { return count() >= want })
	}
	// history is the crash loops' check, through a member in the majority.
	history := func(what string, via int) {
		t.Helper()
		mu.Lock()
		acked := maps.Clone(printed)
		mu.Unlock()
		checkAcknowledged(t, acked, nc.must(srv[via], "qselect"))
		if s := nc.jobAttrOn(srv[via], job, "job_state"); s != "R" && s != "F" {
			t.Errorf("%s: the beat job is %q", what, s)
		}
		if v := nc.jobAttrOn(srv[via], done, "Exit_status"); v != "3" {
			t.Errorf("%s: finished job %s has Exit_status %q, want 3", what, done, v)
		}
		t.Logf("%s: %d acknowledged jobs all there", what, len(acked))
	}
	progress("before the partitions", 10)

	for round := 0; round < rounds(1, 5); round++ {
		// (1) The leader cut off from the other two.
		old := -1
		nc.waitFor("a leader", 20*time.Second, func() bool { old = leader(round % 3); return old >= 0 })
		other := (old + 1) % 3
		ipCmd(t, "-n", nc.sw, "link", "set", srv[old].port, "down")
		cut := time.Now()
		// The old leader stops acknowledging: a qsub there fails.
		nc.waitFor("the cut-off leader refusing qsub", 20*time.Second, func() bool {
			r := nc.run(srv[old], "#!/bin/sh\n", "qsub", "-h")
			if r.Code == 0 {
				mu.Lock()
				printed[strings.TrimSpace(r.Stdout)]++
				mu.Unlock()
			}
			return r.Code != 0
		})
		// README: it steps down within 0.5 s; seconds allow for a loaded machine.
		if d := time.Since(cut); d > 5*time.Second {
			t.Errorf("round %d: the cut-off leader went on for %v", round, d)
		} else {
			t.Logf("round %d: the cut-off leader refused qsub %v after the cut", round, d.Round(time.Millisecond))
		}
		nc.waitFor("a new leader in the majority", 20*time.Second, func() bool {
			l := leader(other)
			return l >= 0 && l != old
		})
		progress("with the leader cut off", 10)
		history("leader cut off", other)
		ipCmd(t, "-n", nc.sw, "link", "set", srv[old].port, "up")
		nc.waitFor("the old leader following the new one", 30*time.Second, func() bool {
			l := leader(old)
			return l >= 0 && l != old
		})
		progress("healed", 10)
		history("after healing the leader's partition", old)

		// (2) A follower cut off: service goes on.
		lead := -1
		nc.waitFor("a leader", 20*time.Second, func() bool { lead = leader(other); return lead >= 0 })
		f, g := (lead+1)%3, (lead+2)%3
		ipCmd(t, "-n", nc.sw, "link", "set", srv[f].port, "down")
		progress("with a follower cut off", 20)
		history("follower cut off", lead)
		ipCmd(t, "-n", nc.sw, "link", "set", srv[f].port, "up")
		// Caught up: with the other follower cut off in turn, every commit
		// needs the healed one.
		ipCmd(t, "-n", nc.sw, "link", "set", srv[g].port, "down")
		progress("with the healed follower in the majority", 10)
		ipCmd(t, "-n", nc.sw, "link", "set", srv[g].port, "up")
		history("after healing the follower", f)
	}

	mu.Lock()
	killing = true
	if len(dropped) > 0 {
		t.Errorf("%d qsubs met a dropped connection during the partitions, the first: %s", len(dropped), dropped[0])
	}
	mu.Unlock()

	// (3) Two members down: "No quorum" at once on the third.
	survivor := 0
	for i := 1; i < 3; i++ {
		daemons[i].Process.Signal(syscall.SIGKILL)
		daemons[i].Wait()
	}
	nc.waitFor("qsub refused for want of a quorum", 20*time.Second, func() bool {
		r := nc.run(srv[survivor], "#!/bin/sh\n", "qsub", "-h")
		if r.Code == 0 {
			t.Errorf("qsub acknowledged %s without a quorum", strings.TrimSpace(r.Stdout))
			return true
		}
		return strings.Contains(r.Stderr, "No quorum")
	})
	// A member that has had no leader for 3 s answers at once; one
	// still taking part in an election waits that long first (the 3 s
	// leaderless window), never the client's whole timeout.
	start := time.Now()
	if r := nc.run(srv[survivor], "#!/bin/sh\n", "qsub", "-h"); r.Code == 0 || !strings.Contains(r.Stderr, "No quorum") || time.Since(start) > 5*time.Second {
		t.Errorf("qsub without a quorum: code %d after %v: %q, want No quorum within the leaderless window", r.Code, time.Since(start), r.Stderr)
	}
	for i := 1; i < 3; i++ {
		daemons[i] = nc.start(srv[i], "pbs_server")
	}
	progress("with the group whole again", 10)
	close(stop)
	wg.Wait()
	history("after two members down", survivor)

	// The beat job ran once, to its end, and kept its exit status.
	nc.waitFor("the beat job finished", 60*time.Second, func() bool { return nc.jobAttrOn(srv[0], job, "job_state") == "F" })
	if v := nc.jobAttrOn(srv[0], job, "Exit_status"); v != "0" {
		t.Errorf("Exit_status %q, want 0", v)
	}
	if v := nc.jobAttrOn(srv[0], job, "run_count"); v != "1" {
		t.Errorf("run_count %q: the beat job was started again", v)
	}
	checkNoOverlap(t, beats)
}
