// Interactive jobs (qsub -I): the shepherd connects to the port qsub
// listens on, both prove they hold the job's secret
// (internal/interactive), and the owner's login shell runs instead of the
// script, on a pseudo-terminal relayed to qsub, or on pipes when the
// user's standard input is not a terminal (its commands are then read by
// the shell as a script is). The terminal is the shepherd's controlling
// terminal, so the shell and everything it starts stay in the shepherd's
// session (the mom samples and kills a job by session) while the shell
// has job control: ^C and ^Z typed at qsub reach the foreground job. The
// job ends when the shell exits, and when qsub goes away (the session is
// hung up, then killed after the kill delay).

package shepherd

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/gopbs/gopbs/internal/interactive"
	"github.com/gopbs/gopbs/proto"
)

// Bounds of reaching qsub: the connection, and then both proofs.
const (
	qsubConnectTimeout = 30 * time.Second
	qsubHandshake      = 30 * time.Second
)

// outputGrace is how long the job's last output may take to reach qsub
// once its processes are gone; a process that left the session may hold
// the terminal open for ever.
const outputGrace = 2 * time.Second

// terminal is an interactive job's end of its qsub connection.
type terminal struct {
	nc  net.Conn
	fc  *interactive.Conn
	tty bool
	// term is the user's TERM, for the shell's environment.
	term string
	// x11 forwards the job's X clients (qsub -X; nil without), and
	// x11Env is the DISPLAY and XAUTHORITY it gives the job.
	x11    *x11Forward
	x11Env []string

	// With a terminal: master is the shepherd's side, slave the job's
	// (the shepherd's copy is closed once the shell runs).
	master, slave *os.File
	// Without: the shell's standard input, output and error, the
	// shepherd's ends (stdinW, outR, errR) and the shell's (child).
	stdinW, outR, errR *os.File
	child              [3]*os.File

	// lost is closed when qsub's connection ends before the job did.
	lost      chan struct{}
	finished  chan struct{}
	endOnce   sync.Once
	closeOnce sync.Once
	output    sync.WaitGroup
}

// commentQsubUnreachable is the job's comment whenever its qsub could
// not be reached or did not prove itself, whatever the reason. The
// shepherd dials as root a port the submitter named, and the comment is
// the submitter's to read: "connection refused", a reset or a handshake
// error would tell what listens on that port of the submission host, as
// the execution host sees it. The reason goes to the mom's log
// (Result.Notes).
const commentQsubUnreachable = "job exec failed: could not reach the interactive qsub"

// unreachableError is a failure to reach or prove the job's qsub: its
// text is for the mom's log only (terminalFailed).
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// qsubAddr is the address of the job's qsub, refused when the port is
// one qsub never listens on (a privileged one: the server refuses it at
// submission, but a job stored before it did, or a server that does not,
// may name one).
func qsubAddr(in *proto.InteractiveSession) (string, error) {
	if in.Port < proto.MinInteractivePort || in.Port > 65535 {
		return "", fmt.Errorf("qsub's port %d is not one qsub listens on (%d-65535): not dialed", in.Port, proto.MinInteractivePort)
	}
	return net.JoinHostPort(in.Host, strconv.Itoa(in.Port)), nil
}

// reachQsub connects to the job's qsub and proves itself; it returns
// qsub's Setup. Every error is an *unreachableError.
func (sh *shepherd) reachQsub() (net.Conn, *interactive.Conn, interactive.Frame, error) {
	in := sh.job.Interactive
	addr, err := qsubAddr(in)
	if err != nil {
		return nil, nil, interactive.Frame{}, &unreachableError{err}
	}
	d := net.Dialer{Timeout: qsubConnectTimeout, KeepAliveConfig: net.KeepAliveConfig{
		// A qsub whose host vanished (no FIN ever comes) is found
		// within half a minute, and its job ends.
		Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3,
	}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, nil, interactive.Frame{}, &unreachableError{fmt.Errorf("cannot reach qsub at %s: %w", addr, err)}
	}
	nc.SetDeadline(time.Now().Add(qsubHandshake))
	fc := interactive.NewConn(nc)
	setup, err := fc.Connect(sh.job.JobID, in.Cookie, rand.Reader)
	if err != nil {
		nc.Close()
		return nil, nil, interactive.Frame{}, &unreachableError{fmt.Errorf("qsub at %s: %w", addr, err)}
	}
	nc.SetDeadline(time.Time{})
	return nc, fc, setup, nil
}

// terminalFailed is the result of a job whose terminal could not be
// opened: a failure to reach qsub gets the one neutral comment and its
// reason a note for the mom's log; a failure of this host's own (a
// pseudo-terminal) is told as it is.
func (sh *shepherd) terminalFailed(err error) Result {
	var ue *unreachableError
	if !errors.As(err, &ue) {
		return sh.fail(proto.JobExecFail1, "job exec failed: %v", err)
	}
	res := sh.fail(proto.JobExecFail1, "%s", commentQsubUnreachable)
	res.Notes = append(res.Notes, "interactive job: "+err.Error())
	return res
}

// openTerminal reaches the job's qsub, proves itself, and makes the
// terminal (or the pipes) the shell will run on; the relay starts at
// once, so that what the prologue writes and what the user types ahead
// get through.
func (sh *shepherd) openTerminal() (*terminal, error) {
	nc, fc, setup, err := sh.reachQsub()
	if err != nil {
		return nil, err
	}
	t := &terminal{nc: nc, fc: fc, tty: setup.Tty, term: setup.Term, lost: make(chan struct{}), finished: make(chan struct{})}
	if err := t.open(sh, setup.Size); err != nil {
		t.close()
		return nil, err
	}
	if setup.X11 {
		if t.x11, t.x11Env, err = sh.forwardX11(fc); err != nil {
			// As ssh: the session goes on, without X.
			t.notice("PBS: X11 forwarding failed: " + err.Error())
		}
	}
	go t.input()
	if t.tty {
		t.relayOutput(t.master, interactive.KindData)
	} else {
		t.relayOutput(t.outR, interactive.KindData)
		t.relayOutput(t.errR, interactive.KindStderr)
	}
	return t, nil
}

// open makes the pseudo-terminal, the owner's as login makes it (owner
// read-write, group write), and the shepherd's controlling terminal; or,
// without one, the pipes.
func (t *terminal) open(sh *shepherd, size interactive.Winsize) error {
	if !t.tty {
		var pipes [6]*os.File
		for i := 0; i < 6; i += 2 {
			r, w, err := os.Pipe()
			if err != nil {
				return fmt.Errorf("pipes: %w", err)
			}
			pipes[i], pipes[i+1] = r, w
		}
		t.child = [3]*os.File{pipes[0], pipes[3], pipes[5]}
		t.stdinW, t.outR, t.errR = pipes[1], pipes[2], pipes[4]
		return nil
	}
	master, slave, err := pty.Open()
	if err != nil {
		return fmt.Errorf("pseudo-terminal: %w", err)
	}
	t.master, t.slave = master, slave
	t.resize(size)
	if os.Geteuid() == 0 {
		if err := slave.Chown(int(sh.usr.UID), -1); err != nil {
			return fmt.Errorf("pseudo-terminal: %w", err)
		}
		if err := slave.Chmod(0o620); err != nil {
			return fmt.Errorf("pseudo-terminal: %w", err)
		}
	}
	// The shepherd leads its session (the mom starts it so): the shell
	// it starts in the foreground of this terminal has job control.
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, slave.Fd(), syscall.TIOCSCTTY, 0); e != 0 {
		return fmt.Errorf("pseudo-terminal: controlling terminal: %w", e)
	}
	return nil
}

func (t *terminal) resize(s interactive.Winsize) {
	if t.master != nil && s.Rows > 0 && s.Cols > 0 {
		pty.Setsize(t.master, &pty.Winsize{Rows: s.Rows, Cols: s.Cols, X: s.X, Y: s.Y})
	}
}

// input relays what qsub sends to the job until the connection ends.
func (t *terminal) input() {
	for {
		f, err := t.fc.Recv()
		if err != nil {
			select {
			case <-t.finished:
			default:
				close(t.lost)
			}
			return
		}
		switch f.Kind {
		case interactive.KindData:
			w := t.master
			if !t.tty {
				w = t.stdinW
			}
			// A shell that stopped reading (or exited) must not stop
			// the relay: what it did not take is dropped.
			w.Write(f.Data)
		case interactive.KindWinsize:
			t.resize(f.Size)
		case interactive.KindEOF:
			if t.stdinW != nil {
				t.stdinW.Close()
			}
		case interactive.KindX11Data:
			if t.x11 != nil {
				t.x11.chans.Write(f.Channel, f.Data)
			}
		case interactive.KindX11Close:
			if t.x11 != nil {
				t.x11.chans.End(f.Channel, false)
			}
		}
	}
}

// relayOutput sends what r gives to qsub as frames of kind, until r
// ends: the pseudo-terminal once no process holds it, a pipe once no
// process can write to it.
func (t *terminal) relayOutput(r *os.File, kind interactive.Kind) {
	t.output.Add(1)
	go func() {
		defer t.output.Done()
		interactive.Relay(r, func(p []byte) error { return t.fc.SendData(kind, p) })
	}()
}

// stdio are the shell's standard input, output and error (the
// shepherd's descriptors, valid until started).
func (t *terminal) stdio() [3]*os.File {
	if t.tty {
		return [3]*os.File{t.slave, t.slave, t.slave}
	}
	return t.child
}

// started closes the shepherd's copies of the shell's ends: the relay of
// its output then ends with the last process that holds them.
func (t *terminal) started() {
	if t.tty {
		t.slave.Close()
		return
	}
	for _, f := range t.child {
		f.Close()
	}
}

// notice shows the user a message of PBS's own.
func (t *terminal) notice(msg string) {
	t.fc.Send(&interactive.Frame{Kind: interactive.KindNotice, Data: []byte(msg)})
}

// finish sends the job's exit status after the last of its output, then
// closes the connection: qsub exits with that status. A comment (why a
// job that never ran its shell ended) is shown first.
func (t *terminal) finish(status int, comment string) {
	t.endOnce.Do(func() {
		close(t.finished)
		if comment != "" {
			t.notice("PBS: " + comment)
		}
		done := make(chan struct{})
		go func() { t.output.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(outputGrace):
		}
		t.fc.Send(&interactive.Frame{Kind: interactive.KindExit, Status: status})
		t.close()
	})
}

func (t *terminal) close() {
	t.closeOnce.Do(func() {
		if t.x11 != nil {
			t.x11.close()
		}
		t.nc.Close()
		for _, f := range []*os.File{t.master, t.slave, t.stdinW, t.outR, t.errR, t.child[0], t.child[1], t.child[2]} {
			if f != nil {
				f.Close()
			}
		}
	})
}

// shellCommand is an interactive job's program: the -S shell, else the
// owner's login shell, started as a login shell (argv[0] "-name"), as
// OpenPBS's mom starts it.
func (sh *shepherd) shellCommand() (path string, argv []string) {
	path = pickShell(sh.job.ShellPath)
	if path == "" {
		path = sh.usr.Shell
	}
	if path == "" {
		path = "/bin/sh"
	}
	return path, []string{"-" + filepath.Base(path)}
}

// interactiveEnv adjusts a job's environment for its terminal:
// PBS_ENVIRONMENT says PBS_INTERACTIVE (OpenPBS), TERM is the user's
// when the job has a terminal, and x11 (DISPLAY and XAUTHORITY, with X11
// forwarding) replaces what the job was given of those.
func interactiveEnv(env []string, tty bool, term string, x11 []string) []string {
	out := make([]string, 0, len(env)+1+len(x11))
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "PBS_ENVIRONMENT="):
			kv = "PBS_ENVIRONMENT=PBS_INTERACTIVE"
		case strings.HasPrefix(kv, "TERM="):
			continue
		case len(x11) > 0 && (strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "XAUTHORITY=")):
			continue
		}
		out = append(out, kv)
	}
	if tty && term != "" {
		out = append(out, "TERM="+term)
	}
	return append(out, x11...)
}

// signalJob sends sig to the job's process group and, for an interactive
// job, to every process of the session: a shell with job control puts
// each of its jobs in a group of its own.
func (sh *shepherd) signalJob(sig syscall.Signal) {
	syscall.Kill(-sh.pgid, sig)
	if sh.job.Interactive != nil {
		for _, p := range SessionProcesses(os.Getpid()) {
			syscall.Kill(p.PID, sig)
		}
	}
}

// errQsubLost is the kill reason when qsub went away.
var errQsubLost = errors.New("job killed: its interactive qsub went away")

// dupFD duplicates f's descriptor (close-on-exec), for the output
// descriptors the prologue and the shell are given and the shepherd
// closes when it has started them.
func dupFD(f *os.File) (int, error) {
	fd, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_DUPFD_CLOEXEC, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}
