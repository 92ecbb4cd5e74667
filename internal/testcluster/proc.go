package testcluster

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// proc is one daemon process of a cluster.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// startProc starts path with args and env, appending its output to
// logPath, in its own process group.
func startProc(t TB, path string, args, env []string, logPath string) *proc {
	t.Helper()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends sig and waits up to timeout, then kills; it reports whether
// the process ended by itself.
func (p *proc) stop(sig syscall.Signal, timeout time.Duration) bool {
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return true
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		return false
	}
}

// pid is the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// waitExit waits up to timeout for the process to end by itself and returns
// its exit code, or -1 when it is still running.
func (p *proc) waitExit(timeout time.Duration) int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		return -1
	}
}

// down waits up to timeout for the process to end and reports whether it
// has (whatever its exit status: a signal gives no exit code).
func (p *proc) down(timeout time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// daemon is a daemon process of a cluster that tests stop and start again;
// p is nil while it is stopped.
type daemon struct{ p *proc }

// Kill sends sig and waits for the process to exit (after 20 s, SIGKILL).
func (d *daemon) Kill(sig syscall.Signal) {
	if d.p == nil {
		return
	}
	d.p.stop(sig, 20*time.Second)
	d.p = nil
}

// WaitDown waits up to timeout for the process to have exited by itself
// (a crash or an exit) and reports whether it did; it then counts as
// stopped and can be started again.
func (d *daemon) WaitDown(timeout time.Duration) bool {
	if d.p == nil {
		return true
	}
	if !d.p.down(timeout) {
		return false
	}
	d.p = nil
	return true
}

// WaitExit waits up to timeout for the process to exit by itself and
// returns its exit code, or -1 when it is still running (or died of a
// signal).
func (d *daemon) WaitExit(timeout time.Duration) int {
	if d.p == nil {
		return -1
	}
	code := d.p.waitExit(timeout)
	if code >= 0 {
		d.p = nil
	}
	return code
}

// Pid is the process id (0 when stopped).
func (d *daemon) Pid() int {
	if d.p == nil {
		return 0
	}
	return d.p.pid()
}
