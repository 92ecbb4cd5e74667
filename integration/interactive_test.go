package integration

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// waitJobNamed waits for a job named name (an interactive qsub's, whose
// id it prints only once the job starts) and returns its id.
func waitJobNamed(t *testing.T, c *testcluster.Cluster, name string) string {
	t.Helper()
	var id string
	testcluster.WaitFor(t, "job "+name+" on the server", 20*time.Second, func() (bool, string) {
		for _, l := range strings.Fields(c.Run("qselect", "-N", name).Stdout) {
			id = l
		}
		return id != "", "none"
	})
	return id
}

// ptyQsub is qsub -I running on a pseudo-terminal, as a user at a
// terminal runs it: the test types into it and reads its screen.
type ptyQsub struct {
	t    *testing.T
	c    *testcluster.Cluster
	cmd  *exec.Cmd
	ptmx *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	read chan struct{} // closed when the screen has all qsub wrote
	code int
}

func startPtyQsub(t *testing.T, c *testcluster.Cluster, size *pty.Winsize, args ...string) *ptyQsub {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.Bin, "qsub"), append([]string{"-I"}, args...)...)
	cmd.Env = append(c.Env(), "TERM=xterm")
	cmd.Dir = c.Home
	ptmx, err := pty.StartWithSize(cmd, size)
	if err != nil {
		t.Fatal(err)
	}
	q := &ptyQsub{t: t, c: c, cmd: cmd, ptmx: ptmx, done: make(chan struct{}), read: make(chan struct{})}
	go func() {
		defer close(q.read)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			q.mu.Lock()
			q.out.Write(buf[:n])
			q.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			q.code = ee.ExitCode()
		case err != nil:
			q.code = -1
		}
		close(q.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-q.done
		ptmx.Close()
	})
	return q
}

func (q *ptyQsub) screen() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.out.String()
}

// expect waits for re on the screen and returns its submatches.
func (q *ptyQsub) expect(re string, timeout time.Duration) []string {
	q.t.Helper()
	rx := regexp.MustCompile(re)
	var m []string
	testcluster.WaitFor(q.t, "qsub -I to show "+re, timeout, func() (bool, string) {
		s := q.screen()
		m = rx.FindStringSubmatch(s)
		return m != nil, s
	})
	return m
}

func (q *ptyQsub) typeIn(s string) {
	q.t.Helper()
	if _, err := q.ptmx.WriteString(s); err != nil {
		q.t.Fatal(err)
	}
}

// exited waits for qsub's end and returns its exit status.
func (q *ptyQsub) exited(timeout time.Duration) int {
	q.t.Helper()
	select {
	case <-q.done:
		// Its last lines may still be on their way through the
		// terminal, which ends when no process holds it.
		select {
		case <-q.read:
		case <-time.After(timeout):
			q.t.Errorf("qsub's terminal still held %v after its exit", timeout)
		}
		return q.code
	case <-time.After(timeout):
		q.t.Fatalf("qsub -I did not exit within %v; screen:\n%s", timeout, q.screen())
		return 0
	}
}

// started waits for "waiting for job N to start", starts the job and
// waits for "job N ready"; it returns the id.
func (q *ptyQsub) started() string {
	q.t.Helper()
	id := q.expect(`qsub: waiting for job (\S+) to start`, 20*time.Second)[1]
	q.c.MustRun("qrun", id)
	q.expect(`qsub: job `+regexp.QuoteMeta(id)+` ready`, 20*time.Second)
	return id
}

// processWithArgs finds a process whose command line is exactly args
// (the tests use sleeps of unusual lengths to find theirs).
func processWithArgs(args ...string) int {
	want := strings.Join(args, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == want {
			return pid
		}
	}
	return 0
}

func waitProcess(t *testing.T, args ...string) int {
	t.Helper()
	pid := 0
	testcluster.WaitFor(t, "process "+strings.Join(args, " "), 20*time.Second, func() (bool, string) {
		pid = processWithArgs(args...)
		return pid != 0, "none"
	})
	return pid
}

// Interactive jobs through a pseudo-terminal, as OpenPBS's qsub -I: the
// shell runs on the job's node in the job's environment, on a terminal
// of the window's size with job control (^C, ^Z), its exit status is
// qsub's and the job's; qsub going away or the walltime ends the job;
// standard input that is not a terminal is read as commands; -I with -J
// and a rerun of an interactive job are refused.
func TestInteractiveJob(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.AddMom("n1", testcluster.MomOptions{})

	// OpenPBS's escapes: "~~" sends a tilde, "~." at the start of a line
	// ends the session, and with it the job.
	t.Run("escape", func(t *testing.T) {
		q := startPtyQsub(t, c, nil, "-N", "iescape")
		id := q.started()
		q.typeIn("~~echo tilde\r")
		q.expect(`~echo tilde\r\n.*tilde`, 20*time.Second)
		q.typeIn("sleep 7171 &\r")
		waitProcess(t, "sleep", "7171")
		q.typeIn("\r~.")
		q.expect(`session closed \(~\.\)`, 20*time.Second)
		q.exited(20 * time.Second)
		c.WaitJobState(id, "F", 30*time.Second)
		testcluster.WaitFor(t, "the session's processes to die", 20*time.Second, func() (bool, string) {
			return processWithArgs("sleep", "7171") == 0, "sleep 7171 still runs"
		})
	})

	t.Run("shell", func(t *testing.T) {
		q := startPtyQsub(t, c, &pty.Winsize{Rows: 33, Cols: 111}, "-N", "ishell")
		id := q.started()
		if got := attr(t, c, id, "interactive"); got != "True" {
			t.Errorf("qstat -f interactive = %q, want True", got)
		}
		if got := attr(t, c, id, "Rerunable"); got != "False" {
			t.Errorf("qstat -f Rerunable = %q, want False", got)
		}
		q.typeIn("echo ID=$PBS_JOBID ENV=$PBS_ENVIRONMENT NF=$PBS_NODEFILE TMP=${TMPDIR:+set}; tty; stty size\r")
		m := q.expect(`ID=(\S+) ENV=(\S+) NF=(\S+) TMP=set\r\n(/dev/\S+)\r\n(\d+ \d+)\r\n`, 20*time.Second)
		if m[1] != id || m[2] != "PBS_INTERACTIVE" || !strings.HasSuffix(m[3], "/nodefile") || m[5] != "33 111" {
			t.Errorf("the job's shell said ID=%s ENV=%s NF=%s tty %s size %q; want %s, PBS_INTERACTIVE, the node file, 33 111", m[1], m[2], m[3], m[4], m[5], id)
		}
		// A new window size reaches the job's terminal.
		if err := pty.Setsize(q.ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
			t.Fatal(err)
		}
		// qsub sends it on SIGWINCH, beside what is typed: ask until an
		// answer shows it (each answer proves a round trip).
		for i := 0; ; i++ {
			q.typeIn(fmt.Sprintf("echo size-%d: $(stty size)\r", i))
			if m := q.expect(fmt.Sprintf(`size-%d: (\d+ \d+)\r\n`, i), 20*time.Second); m[1] == "40 120" {
				break
			}
			if i == 50 {
				t.Fatalf("the job's terminal never took the new size; screen:\n%s", q.screen())
			}
		}

		// ^C interrupts the foreground job, and the shell prompts again.
		q.typeIn("sleep 4711\r")
		pid := waitProcess(t, "sleep", "4711")
		q.typeIn("\x03")
		q.typeIn("echo after-int-$((6*7))\r")
		q.expect(`after-int-42`, 20*time.Second)
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("sleep %d survived ^C", pid)
		}
		// ^Z stops it, and the shell's job control takes over.
		q.typeIn("sleep 4712\r")
		pid = waitProcess(t, "sleep", "4712")
		q.typeIn("\x1a")
		q.expect(`Stopped\s+sleep 4712`, 20*time.Second)
		q.typeIn("kill -9 %1; echo after-stop-$((6*7))\r")
		q.expect(`after-stop-42`, 20*time.Second)

		// An interactive job is not rerun, not even by force.
		for _, args := range [][]string{{id}, {"-W", "force", id}} {
			if r := c.Run("qrerun", args...); r.Code == 0 || !strings.Contains(r.Stderr, "not rerunnable") {
				t.Errorf("qrerun %v: %s", args, r)
			}
		}

		q.typeIn("exit 3\r")
		if code := q.exited(30 * time.Second); code != 3 {
			t.Errorf("qsub -I exited %d, want the shell's 3; screen:\n%s", code, q.screen())
		}
		if s := q.screen(); !strings.Contains(s, "qsub: job "+id+" completed") {
			t.Errorf("no completion line; screen:\n%s", s)
		}
		c.WaitJobState(id, "F", 20*time.Second)
		if got := attr(t, c, id, "Exit_status"); got != "3" {
			t.Errorf("Exit_status = %q, want 3", got)
		}
	})

	t.Run("qsub killed", func(t *testing.T) {
		q := startPtyQsub(t, c, &pty.Winsize{Rows: 24, Cols: 80})
		id := q.started()
		q.typeIn("sleep 4713\r")
		pid := waitProcess(t, "sleep", "4713")
		q.cmd.Process.Kill()
		c.WaitJobState(id, "F", 20*time.Second)
		testcluster.WaitFor(t, "the job's sleep to die with it", 10*time.Second, func() (bool, string) {
			return syscall.Kill(pid, 0) != nil, "alive"
		})
		if got := attr(t, c, id, "comment"); !strings.Contains(got, "qsub went away") {
			t.Errorf("comment = %q, want why the job ended", got)
		}
	})

	// The shepherd dials as root: the comment, the submitter's to read,
	// says nothing of what it met there ("connection refused" would
	// tell a closed port from an open one); the mom's log has it.
	t.Run("qsub gone before the start", func(t *testing.T) {
		q := startPtyQsub(t, c, &pty.Winsize{Rows: 24, Cols: 80})
		id := q.expect(`qsub: waiting for job (\S+) to start`, 20*time.Second)[1]
		q.cmd.Process.Kill()
		q.exited(20 * time.Second)
		c.MustRun("qrun", id)
		c.WaitJobState(id, "F", 30*time.Second)
		if got := attr(t, c, id, "comment"); got != "job exec failed: could not reach the interactive qsub" {
			t.Errorf("comment = %q, want only that qsub could not be reached", got)
		}
		mom := c.Mom("n1")
		testcluster.WaitFor(t, "the reason in the mom's log", 10*time.Second, func() (bool, string) {
			for _, l := range strings.Split(mom.Log(), "\n") {
				if strings.Contains(l, id) && strings.Contains(l, "connection refused") {
					return true, ""
				}
			}
			return false, mom.Log()
		})
	})

	t.Run("walltime", func(t *testing.T) {
		q := startPtyQsub(t, c, &pty.Winsize{Rows: 24, Cols: 80}, "-l", "walltime=5")
		id := q.started()
		q.expect(`PBS: job killed: walltime \d+ exceeded limit 5`, 30*time.Second)
		if code := q.exited(30 * time.Second); code == 0 {
			t.Errorf("qsub -I exited 0 after the walltime; screen:\n%s", q.screen())
		}
		c.WaitJobState(id, "F", 20*time.Second)
		if got := attr(t, c, id, "Exit_status"); got != "-29" {
			t.Errorf("Exit_status = %q, want -29 (walltime)", got)
		}
	})

	t.Run("commands on standard input", func(t *testing.T) {
		done := make(chan testcluster.Result, 1)
		go func() { done <- c.RunStdin("echo hi-$((2+3)); exit 0\n", "qsub", "-I", "-N", "piped") }()
		id := waitJobNamed(t, c, "piped")
		c.MustRun("qrun", id)
		select {
		case r := <-done:
			if r.Code != 0 || !strings.Contains(r.Stdout, "hi-5\n") || !strings.Contains(r.Stdout, "qsub: job "+id+" ready") {
				t.Errorf("qsub -I < commands: %s", r)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("qsub -I with commands on standard input did not return")
		}
		c.WaitJobState(id, "F", 20*time.Second)
		if got := attr(t, c, id, "Exit_status"); got != "0" {
			t.Errorf("Exit_status = %q, want 0", got)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, args := range [][]string{{"-I", "-J", "1-2"}, {"-I", "-r", "y"}} {
			if r := c.Run("qsub", args...); r.Code != 2 || !strings.Contains(r.Stderr, "interactive") {
				t.Errorf("qsub %v: %s; want a usage error", args, r)
			}
		}
	})
}

// listeningSockets are the TCP sockets process pid listens on, read from
// its descriptors and its network namespace's tables.
func listeningSockets(pid int) ([]netip.AddrPort, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if ino, ok := strings.CutPrefix(l, "socket:["); ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	var out []netip.AddrPort
	for _, table := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue // no IPv6
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			hexAddr, hexPort, _ := strings.Cut(f[1], ":")
			raw, err1 := hex.DecodeString(hexAddr)
			port, err2 := strconv.ParseUint(hexPort, 16, 16)
			if err1 != nil || err2 != nil || len(raw)%4 != 0 {
				return nil, fmt.Errorf("%s: cannot read %q", table, f[1])
			}
			// The kernel prints each 32-bit word of the address in the
			// host's (little-endian) byte order.
			for i := 0; i < len(raw); i += 4 {
				raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
			}
			a, _ := netip.AddrFromSlice(raw)
			out = append(out, netip.AddrPortFrom(a.Unmap(), uint16(port)))
		}
	}
	return out, nil
}

// qsub -I's listener: it listens on the addresses of the job's submit
// host only (the name the shepherd dials), and a flood of silent
// connections, more than qsub has descriptors for, neither exhausts it
// nor keeps the shepherd out: qsub holds a few pending connections,
// closes the oldest for each newcomer, and the shepherd, last, gets in.
func TestInteractiveListener(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.AddMom("n1", testcluster.MomOptions{})

	// 64 descriptors: a qsub that held every connection would run out
	// long before the flood ends.
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n 64 && exec "$0" -I -N iflood`, filepath.Join(c.Bin, "qsub"))
	cmd.Env = c.Env()
	cmd.Dir = c.Home
	cmd.Stdin = strings.NewReader("echo flood-$((6*7)); exit 0\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	id := waitJobNamed(t, c, "iflood")

	host := attr(t, c, id, "Submit_Host")
	ips, err := net.LookupIP(host)
	if err != nil {
		t.Fatalf("the submit host %q: %v", host, err)
	}
	mine := map[netip.Addr]bool{}
	for _, ip := range ips {
		a, _ := netip.AddrFromSlice(ip)
		mine[a.Unmap()] = true
	}
	var socks []netip.AddrPort
	testcluster.WaitFor(t, "qsub's listening sockets", 20*time.Second, func() (bool, string) {
		socks, err = listeningSockets(cmd.Process.Pid)
		return len(socks) > 0, fmt.Sprint(err)
	})
	for _, s := range socks {
		if !mine[s.Addr()] {
			t.Errorf("qsub listens on %v; want only the addresses of the submit host %s (%v)", s, host, ips)
		}
	}

	var flood []net.Conn
	defer func() {
		for _, nc := range flood {
			nc.Close()
		}
	}()
	for i := 0; i < 200; i++ {
		nc, err := net.DialTimeout("tcp", socks[0].String(), 10*time.Second)
		if err != nil {
			t.Fatalf("flood connection %d: %v", i, err)
		}
		flood = append(flood, nc)
	}
	c.MustRun("qrun", id)
	select {
	case <-exited:
		if waitErr != nil || !strings.Contains(out.String(), "qsub: job "+id+" ready") || !strings.Contains(out.String(), "flood-42\n") {
			t.Errorf("qsub -I after the flood: %v\nstdout %q\nstderr %q", waitErr, out.String(), errb.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("qsub -I did not end after the flood")
	}
	c.WaitJobState(id, "F", 20*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "0" {
		t.Errorf("Exit_status = %q, want 0 (comment %q)", got, attr(t, c, id, "comment"))
	}
}
