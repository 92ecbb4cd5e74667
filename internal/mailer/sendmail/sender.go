package sendmail

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/mailer"
)

// Defaults of a Sender.
const (
	DefaultQueue   = 1000             // messages waiting at most
	DefaultTimeout = 30 * time.Second // one run of the mailer
)

// Sender runs the mailer for each message, one at a time, from a bounded
// queue. The zero value is not usable; see New.
type Sender struct {
	path    string
	timeout time.Duration
	log     hclog.Logger
	queue   chan mailer.Message
	done    chan struct{}

	mu      sync.Mutex
	closed  bool
	missing bool // the mailer was not found; said once until it is back
}

// New starts a sender that runs the mailer at path ("sendmail -oi -f
// from rcpt..."); queue and timeout of zero take the defaults.
func New(path string, queue int, timeout time.Duration, log hclog.Logger) *Sender {
	if queue <= 0 {
		queue = DefaultQueue
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &Sender{path: path, timeout: timeout, log: log, queue: make(chan mailer.Message, queue), done: make(chan struct{})}
	if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		// Said at start, where an administrator looks, and not again
		// for each job until the mailer runs.
		s.missing = true
		s.log.Error("the mailer cannot be run: job mail is not sent until it can (set PBS_SENDMAIL in pbs.conf)", "mailer", path, "error", err)
	}
	go s.loop()
	return s
}

// Send queues m without waiting. A full queue drops it, with a log line:
// the server's work never waits for mail.
func (s *Sender) Send(m mailer.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(m.To) == 0 {
		return
	}
	select {
	case s.queue <- m:
	default:
		s.log.Warn("mail queue full; message dropped", "to", strings.Join(m.To, ","), "subject", subject(m.Data))
	}
}

// Close stops taking messages and waits up to wait for the queued ones
// to be handed to the mailer.
func (s *Sender) Close(wait time.Duration) {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.queue)
	}
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-time.After(wait):
		s.log.Warn("mail still queued at shutdown is not sent", "left", len(s.queue))
	}
}

func (s *Sender) loop() {
	defer close(s.done)
	for m := range s.queue {
		s.deliver(m)
	}
}

// deliver runs the mailer once for m: argv only, the message on stdin,
// in its own process group, killed with its children after the timeout.
func (s *Sender) deliver(m mailer.Message) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	// -oi: a line holding only "." (a job name, a comment) does not end
	// the message early, as it would for sendmail reading standard input.
	args := append([]string{"-oi", "-f", m.From}, m.To...)
	cmd := exec.CommandContext(ctx, s.path, args...)
	cmd.Stdin = bytes.NewReader(m.Data)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrPermission) {
		s.mu.Lock()
		first := !s.missing
		s.missing = true
		s.mu.Unlock()
		if first {
			s.log.Error("the mailer cannot be run: job mail is not sent (set PBS_SENDMAIL in pbs.conf)", "mailer", s.path, "error", err)
		}
		return
	}
	s.mu.Lock()
	s.missing = false
	s.mu.Unlock()
	to := strings.Join(m.To, ",")
	switch {
	case ctx.Err() != nil:
		s.log.Warn("mailer timed out; message abandoned", "mailer", s.path, "to", to, "subject", subject(m.Data), "timeout", s.timeout.String())
	case err != nil:
		s.log.Warn("mailer failed", "mailer", s.path, "to", to, "subject", subject(m.Data), "error", err, "output", clip(out.String()))
	default:
		s.log.Debug("mail sent", "to", to, "subject", subject(m.Data))
	}
}

// subject is the Subject header of a composed message, for log lines.
func subject(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Subject: "); ok {
			return v
		}
		if line == "" {
			break
		}
	}
	return ""
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
