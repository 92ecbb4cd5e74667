package hookrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
)

// zygote is the Python process runs are forked from. Its control socket
// (fd 3 on its side, SOCK_SEQPACKET) carries one packet per run with the
// run's channel as SCM_RIGHTS; it reads nothing else and answers nothing.
type zygote struct {
	cmd  *exec.Cmd
	ctl  int // our end of the control socket
	done chan struct{}
}

// startZygote starts the interpreter with the runtime and the pbs module
// as its standard input.
func (r *Runner) startZygote() (*zygote, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "hook-zygote-control")
	defer theirs.Close()
	sources, _ := json.Marshal(map[string]string{"runtime": runtimeSrc, "pbs": pbsSrc})
	// -I: no user site, no PYTHON* variables, the script's directory not
	// on the path; -S would also drop the site packages Debian's
	// python3-* libraries a site's hooks import live in.
	cmd := exec.Command(r.cfg.Python, "-I", "-c", zygoteSrc)
	cmd.Stdin = bytes.NewReader(sources)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stdout = nil
	cmd.Stderr = &logWriter{log: r.log}
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		syscall.Close(fds[0])
		return nil, fmt.Errorf("start %s: %w", r.cfg.Python, err)
	}
	z := &zygote{cmd: cmd, ctl: fds[0], done: make(chan struct{})}
	go func() { cmd.Wait(); close(z.done) }()
	return z, nil
}

func (z *zygote) alive() bool {
	select {
	case <-z.done:
		return false
	default:
		return true
	}
}

// stop closes the control socket, which ends the zygote; its runs go on.
func (z *zygote) stop() {
	syscall.Close(z.ctl)
	<-z.done
}

// fork asks the zygote for a run's process and returns our end of its
// channel; the zygote is started, or started again, as needed.
func (r *Runner) fork() (net.Conn, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("channel: %w", err)
	}
	theirs := fds[1]
	defer syscall.Close(theirs)
	ours := os.NewFile(uintptr(fds[0]), "hook-channel")
	defer ours.Close()
	conn, err := net.FileConn(ours) // a dup: ours is closed either way
	if err != nil {
		return nil, fmt.Errorf("channel: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if r.zyg == nil || !r.zyg.alive() {
			if r.zyg != nil {
				r.log.Warn("the hook runner's interpreter ended; starting it again", "exit", r.zyg.cmd.ProcessState)
				syscall.Close(r.zyg.ctl)
			}
			if r.zyg, err = r.startZygote(); err != nil {
				conn.Close()
				return nil, err
			}
		}
		err = syscall.Sendmsg(r.zyg.ctl, []byte("run"), syscall.UnixRights(theirs), nil, 0)
		if err == nil {
			return conn, nil
		}
		if attempt > 0 {
			conn.Close()
			return nil, fmt.Errorf("hand the run to the interpreter: %w", err)
		}
		r.zyg.stop()
		r.zyg = nil
	}
}

// logWriter puts what the interpreter itself writes on its standard
// error (a start-up failure) into the daemon's log, line by line.
type logWriter struct {
	log interface{ Error(string, ...any) }
	buf []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.log.Error("hook interpreter", "stderr", string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 {
		w.log.Error("hook interpreter", "stderr", string(w.buf))
		w.buf = w.buf[:0]
	}
	return len(p), nil
}
