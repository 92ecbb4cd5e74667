package integration

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// Issue 7: what an attacker or a failing machine does to the daemons, and
// what must hold afterwards.

// deepFrame is one frame just under the 16 MiB cap whose body nests
// millions of one-byte arrays inside a map value a decoder would skip: the
// input that overflowed every daemon's stack.
func deepFrame() []byte {
	const depth = 15 << 20
	payload := []byte{0x97, 0x01, 0x00, 0x00, 0xa0, 0xc2, 0xc0, 0x81, 0xa2, 'z', 'z'}
	payload = append(payload, bytes.Repeat([]byte{0x91}, depth)...)
	payload = append(payload, 0xc0)
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	return append(frame, payload...)
}

// rssKB reads a process's resident set size.
func rssKB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("process %d is gone: %v", pid, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	t.Fatalf("no VmRSS for %d", pid)
	return 0
}

// sendAndWait writes data to a new connection and waits until the peer
// closes it (or a timeout: a peer that keeps a refused connection open is
// a failure of its own).
func sendAndWait(t *testing.T, network, addr string, data []byte) {
	t.Helper()
	nc, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s %s: %v", network, addr, err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	nc.Write(data) // the peer may close before reading it all
	var buf [512]byte
	for {
		if _, err := nc.Read(buf[:]); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("%s %s kept a malformed connection open", network, addr)
			}
			return
		}
	}
}

// One frame of deeply nested arrays, sent before any authentication to
// every port and socket of every daemon, kills none of them, and their
// memory stays within 64 MiB of where it started.
func TestHostileFramesEveryPort(t *testing.T) {
	t.Parallel()
	c, s := schedCluster(t)
	m := c.Mom("n1")
	daemons := map[string]int{"pbs_server": c.ServerPid(), "pbs_mom": m.Pid(), "pbs_sched": s.Pid()}
	before := map[string]int64{}
	for name, pid := range daemons {
		before[name] = rssKB(t, pid)
	}
	frame := deepFrame()
	targets := []struct{ network, addr string }{
		{"unix", filepath.Join(c.Home, "pbs_server.sock")},
		{"tcp", fmt.Sprintf("127.0.0.1:%d", c.BatchPort)},
		{"tcp", fmt.Sprintf("127.0.0.1:%d", m.Port)},
		{"unix", filepath.Join(m.Home, "pbs_mom.sock")},
		{"tcp", fmt.Sprintf("127.0.0.1:%d", c.SchedPort)},
	}
	for round := 0; round < 2; round++ {
		for _, tg := range targets {
			sendAndWait(t, tg.network, tg.addr, frame)
		}
	}
	for name, pid := range daemons {
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("%s died of a hostile frame", name)
		}
		if grown := rssKB(t, pid) - before[name]; grown > 64<<10 {
			t.Errorf("%s grew by %d KiB after the hostile frames", name, grown)
		}
	}
	// Everything still works: a job goes through server, scheduler and mom.
	id := c.Submit("#!/bin/sh\necho alive\n")
	c.WaitJobState(id, "F", 20*time.Second)
	if r := c.RunEnv(m.Env(), "qstat", "-B"); r.Code != 0 {
		t.Fatalf("commands through the mom after the attack: %s", r)
	}
}

// Connections that ask for a long listing (qstat -t of a 10,000-subjob
// array, about 15 MB) and never read cost the server at most
// proto.MaxUnsent each, not the listing, whether they ask it directly or
// through a mom; they are cut off once a write waits proto.WriteTimeout,
// with one log line each, and hold up no one meanwhile.
func TestSlowReaders(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	m := c.AddMom("n1", testcluster.MomOptions{})
	id := c.Submit("#!/bin/sh\n", "-h", "-J", "0-9999")
	seq, _, _ := strings.Cut(id, "[")
	listed := func(out string) int { return strings.Count(out, "\n"+seq+"[") }
	// One honest listing each way first: the baselines include what
	// answering it costs once.
	if r := c.Run("qstat", "-t", id); r.Code != 0 || listed(r.Stdout) != 10001 {
		t.Fatalf("qstat -t of the array before the slow readers (%d lines): %s", listed(r.Stdout), r)
	}
	if r := c.RunEnv(m.Env(), "qstat", "-t", id); r.Code != 0 || listed(r.Stdout) != 10001 {
		t.Fatalf("qstat -t through the mom before the slow readers (%d lines): %s", listed(r.Stdout), r)
	}
	daemons := map[string]int{"pbs_server": c.ServerPid(), "pbs_mom": m.Pid()}
	before := map[string]int64{}
	for name, pid := range daemons {
		before[name] = rssKB(t, pid)
	}
	logBefore, momLogBefore := len(c.DailyServerLog()), len(m.Log())

	// Three of four to the server, the others through the mom.
	const readers, viaMom = 64, 16
	for i := range readers {
		sock := filepath.Join(c.Home, "pbs_server.sock")
		if i < viaMom {
			sock = filepath.Join(m.Home, "pbs_mom.sock")
		}
		// One at a time: connections past their handshake do not count
		// against the budget of pending ones.
		nc := dialIdle(t, "unix", sock, 1)[0]
		conn := proto.NewConn(nc, 0)
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := proto.ClientHandshake(conn, proto.RoleClient, "", nil); err != nil {
			t.Fatalf("slow reader %d: %v", i, err)
		}
		if err := conn.Send(proto.Header{Type: proto.MsgStatusJob, Seq: 1}, &proto.StatusRequest{IDs: []string{id}, Subjobs: true}); err != nil {
			t.Fatalf("slow reader %d: %v", i, err)
		}
	}
	// What a daemon may hold: a margin for the runtime, and the bound for
	// each reader twice over (what waits, the frame being filled and the
	// one being written, and the garbage collector's slack).
	bound := int64(64<<10) + readers*2*proto.MaxUnsent>>10
	peak := map[string]int64{}
	watch := func(when string) {
		for name, pid := range daemons {
			grown := rssKB(t, pid) - before[name]
			peak[name] = max(peak[name], grown)
			if grown > bound {
				t.Fatalf("%s: %s grew by %d KiB with %d slow readers (bound %d KiB)", when, name, grown, readers, bound)
			}
		}
	}
	watch("at once")
	// An honest reader is answered in full meanwhile.
	if r := c.Run("qstat", "-t", id); r.Code != 0 || listed(r.Stdout) != 10001 {
		t.Fatalf("qstat -t of the array among the slow readers (%d lines): %s", listed(r.Stdout), r)
	}
	watch("after an honest qstat")
	testcluster.WaitFor(t, "the slow readers cut off", proto.WriteTimeout+15*time.Second, func() (bool, string) {
		watch("waiting for the cut-offs")
		direct := strings.Count(c.DailyServerLog()[logBefore:], "slow reader")
		relayed := strings.Count(m.Log()[momLogBefore:], "slow reader")
		return direct >= readers-viaMom && relayed >= viaMom,
			fmt.Sprintf("%d of %d slow readers cut off by the server, %d of %d by the mom", direct, readers-viaMom, relayed, viaMom)
	})
	t.Logf("%d slow readers: peak growth %v KiB (bound %d KiB)", readers, peak, bound)
	for _, log := range []string{c.DailyServerLog()[logBefore:], m.Log()[momLogBefore:]} {
		if i := strings.Index(log, "slow reader"); i >= 0 {
			line, _, _ := strings.Cut(log[strings.LastIndexByte(log[:i], '\n')+1:], "\n")
			t.Logf("cut-off: %s", line)
		}
	}
	if r := c.Run("qstat", "-B"); r.Code != 0 {
		t.Fatalf("qstat after the cut-offs: %s", r)
	}
}

// dialIdle opens n connections to addr that never send anything.
func dialIdle(t *testing.T, network, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, nc := range conns {
			nc.Close()
		}
	})
	for i := 0; i < n; i++ {
		nc, err := net.DialTimeout(network, addr, 5*time.Second)
		if err != nil {
			t.Fatalf("idle connection %d to %s: %v", i, addr, err)
		}
		conns = append(conns, nc)
	}
	return conns
}

// fdCount is how many descriptors a process holds.
func fdCount(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// Thousands of silent TCP connections to the server do not lock out local
// commands nor commands forwarded by a mom, and the refusals do not flood
// the log; idle connections to a mom's socket do not open server
// connections; silent connections to the scheduler do not hold up the
// server's cycles.
func TestConnectionFloods(t *testing.T) {
	t.Parallel()
	c, _ := schedCluster(t)
	m := c.Mom("n1")
	waitLog(t, c, `cycle starts: event=scheduler_first`, 10*time.Second)
	logBefore := len(c.DailyServerLog())

	rssBefore := rssKB(t, c.ServerPid())
	dialIdle(t, "tcp", fmt.Sprintf("127.0.0.1:%d", c.BatchPort), 5000)
	if r := c.Run("qstat", "-B"); r.Code != 0 {
		t.Fatalf("local qstat with 5000 idle TCP connections: %s", r)
	}
	if r := c.RunEnv(m.Env(), "qstat", "-B"); r.Code != 0 {
		t.Fatalf("qstat through the mom with 5000 idle TCP connections: %s", r)
	}
	if n := strings.Count(c.DailyServerLog()[logBefore:], "\n"); n > 50 {
		t.Errorf("the flood wrote %d log lines", n)
	}
	// A local user holding a thousand idle connections (each past its
	// handshake, so held until the idle timeout) costs bounded memory.
	local := dialIdle(t, "unix", filepath.Join(c.Home, "pbs_server.sock"), 1000)
	for _, nc := range local {
		conn := proto.NewConn(nc, 0)
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := proto.ClientHandshake(conn, proto.RoleClient, "", nil); err != nil {
			break // past the user's budget: refused
		}
	}
	if r := c.Run("qstat", "-B"); r.Code != 0 {
		t.Fatalf("local qstat with 5000 idle TCP and 1000 idle local connections: %s", r)
	}
	if grown := rssKB(t, c.ServerPid()) - rssBefore; grown > 64<<10 {
		t.Errorf("the server grew by %d KiB holding the idle connections", grown)
	}

	srvFDs := fdCount(t, c.ServerPid())
	dialIdle(t, "unix", filepath.Join(m.Home, "pbs_mom.sock"), 200)
	// The mom accepted them all (or refused past its budget) by now: a
	// command through the same socket is answered after them.
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	if r := c.RunEnvAs(m.Env(), &nobody, "", "qstat", "-B"); r.Code != 0 {
		t.Fatalf("another user's qstat through the mom during the flood: %s", r)
	}
	if grown := fdCount(t, c.ServerPid()) - srvFDs; grown > 20 {
		t.Errorf("200 idle connections to the mom's socket opened %d descriptors in the server", grown)
	}

	dialIdle(t, "tcp", fmt.Sprintf("127.0.0.1:%d", c.SchedPort), 40)
	start := time.Now()
	id := c.Submit("#!/bin/sh\n")
	c.WaitJobState(id, "F", 20*time.Second)
	t.Logf("job through a scheduler with 40 idle connections: %v", time.Since(start))
}

// A mom's lease also fences its jobs when the server is the one that is
// gone: the shepherd kills the job once the lease lapses, what the job
// started outside its session too, and the server, back, requeues it
// (the kill was not the job's doing).
func TestFencedWhileServerDown(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t, "set server node_fail_requeue = 3")
	pidFile := filepath.Join(c.Home, "fenced.pid")
	escaped := fmt.Sprintf("pbsfenced%d", os.Getpid())
	t.Cleanup(func() {
		for _, pid := range processesWith(escaped) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	id := c.Submit(fmt.Sprintf("#!/bin/sh\nsetsid sh -c 'sleep 300; :' %s </dev/null >/dev/null 2>&1 &\necho $$ > %s\nsleep 300\n", escaped, pidFile))
	c.MustRun("qrun", "-H", "n1", id)
	c.WaitJobState(id, "R", 10*time.Second)
	pid := waitPidFile(t, pidFile)
	waitFor(t, "the job's process in a session of its own", 10*time.Second, func() bool { return len(processesWith(escaped)) == 1 })
	c.KillServer(syscall.SIGKILL)
	testcluster.WaitFor(t, fmt.Sprintf("job process %d gone once its lease lapsed (20 s)", pid), 20*time.Second, func() (bool, string) {
		return syscall.Kill(pid, 0) != nil, "still running"
	})
	testcluster.WaitFor(t, "the job's process outside its session gone with it", 10*time.Second, func() (bool, string) {
		pids := processesWith(escaped)
		return len(pids) == 0, fmt.Sprint(pids)
	})
	c.StartServer()
	c.WaitJobState(id, "Q", 20*time.Second)
	if got := attr(t, c, id, "comment"); !strings.Contains(got, "lease") {
		t.Errorf("comment of the fenced job %q", got)
	}
}

func waitPidFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	testcluster.WaitFor(t, "a pid in "+path, 10*time.Second, func() (bool, string) {
		b, err := os.ReadFile(path)
		if err != nil {
			return false, err.Error()
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0, fmt.Sprintf("%q", b)
	})
	return pid
}

// A node that comes back starts a cycle: its queued jobs do not wait for
// the timer (600 s by default).
func TestNodeUpStartsCycle(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	m := c.AddMom("n1", testcluster.MomOptions{})
	c.StartScheduler("pbs_sched")
	m.Kill(syscall.SIGTERM)
	c.WaitNodeState("n1", "down", 15*time.Second)
	id := c.Submit("#!/bin/sh\n")
	waitLog(t, c, `cycle starts: event=new`, 10*time.Second)
	if st := attr(t, c, id, "job_state"); st != "Q" {
		t.Fatalf("job %s with its only node down", st)
	}
	m.Start()
	c.WaitJobState(id, "F", 20*time.Second)
}

// Lowering node_check_rate does not mark healthy nodes down: their moms
// learn the shorter report interval only with their next report.
func TestLoweringNodeCheckRateKeepsNodesUp(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	// The mom's first report told it the default interval (20 s).
	c.MustRun("qmgr", "-c", "set server node_check_rate = 2")
	up := func() {
		if st := c.NodeState("n1"); strings.Contains(st, "down") {
			t.Fatalf("healthy node marked %q after node_check_rate was lowered", st)
		}
	}
	// Its next report (up to 20 s away) tells it the shorter interval; the
	// one after comes on that interval. The node stays up all along.
	waitReports(t, c.Mom("n1"), 2, 60*time.Second, up)
	up()
}

// A scheduler restarted the moment the previous one was killed (as a
// service manager does) waits for the dying one's lock instead of exiting.
func TestSchedulerRestartsAtOnce(t *testing.T) {
	t.Parallel()
	c, s := schedCluster(t)
	for round := 0; round < 5; round++ {
		ready := strings.Count(c.SchedLog(), "scheduler ready")
		s.Crash()
		s = c.StartScheduler("pbs_sched")
		testcluster.WaitFor(t, fmt.Sprintf("round %d: the restarted scheduler ready", round), 20*time.Second, func() (bool, string) {
			if s.WaitExit(0) >= 0 {
				t.Fatalf("round %d: the restarted scheduler exited:\n%s", round, c.SchedStderr("pbs_sched"))
			}
			return strings.Count(c.SchedLog(), "scheduler ready") > ready, "not yet"
		})
	}
	id := c.Submit("#!/bin/sh\n")
	c.WaitJobState(id, "F", 20*time.Second)
}
