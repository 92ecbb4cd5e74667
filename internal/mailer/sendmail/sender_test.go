package sendmail

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/testcluster"
)

// syncBuffer is a log sink the sender's goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testLogger(buf *syncBuffer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Debug})
}

// fakeMailer writes a mailer script that appends its arguments and its
// standard input to out, and returns its path.
func fakeMailer(t *testing.T, body string) (path, out string) {
	t.Helper()
	dir := t.TempDir()
	path, out = filepath.Join(dir, "sendmail"), filepath.Join(dir, "mail.out")
	script := "#!/bin/sh\n" + strings.ReplaceAll(body, "OUT", out) + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testcluster.WaitFor(t, what, 10*time.Second, func() (bool, string) { return cond(), "false" })
}

func TestSenderRunsMailerWithArgvAndStdin(t *testing.T) {
	path, out := fakeMailer(t, `echo "argv: $*" >> OUT; cat >> OUT; echo "--" >> OUT`)
	var logs syncBuffer
	s := New(path, 0, 0, testLogger(&logs))
	// A name with shell syntax reaches the mailer as it is: no shell.
	m := mailer.Compose("adm", mailer.Job{ID: "1.srv", Name: "a;$(touch x)", Owner: "alice@h1"}, mailer.Begin, "")
	s.Send(m)
	s.Send(mailer.Compose("adm", mailer.Job{ID: "2.srv", Name: "b", Owner: "bob@h1", MailUsers: "x@y,z@w"}, mailer.End, ""))
	s.Close(10 * time.Second)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "argv: -oi -f adm alice@h1\n" + string(m.Data) + "--\nargv: -oi -f adm x@y z@w\n"
	if !strings.HasPrefix(string(got), want) || !strings.Contains(string(got), "Subject: PBS JOB 2.srv") {
		t.Fatalf("mailer saw:\n%s\nwant it to start with:\n%s", got, want)
	}
	// Nothing is accepted after Close.
	s.Send(m)
}

func TestSenderMissingMailerLoggedOnce(t *testing.T) {
	var logs syncBuffer
	s := New(filepath.Join(t.TempDir(), "no-sendmail"), 0, 0, testLogger(&logs))
	for i := 0; i < 3; i++ {
		s.Send(mailer.Compose("adm", mailer.Job{ID: "1.srv", Owner: "alice@h1"}, mailer.Abort, "x"))
	}
	s.Close(10 * time.Second)
	if n := strings.Count(logs.String(), "the mailer cannot be run"); n != 1 {
		t.Fatalf("%d log lines for a missing mailer, want 1:\n%s", n, logs.String())
	}
}

func TestSenderFullQueueDropsAndTimeoutKills(t *testing.T) {
	// The first run blocks until released; the queue holds one more.
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	path, out := fakeMailer(t, `echo run >> OUT; while [ ! -e `+gate+` ]; do sleep 0.05; done; cat > /dev/null`)
	var logs syncBuffer
	s := New(path, 1, 20*time.Second, testLogger(&logs))
	m := mailer.Compose("adm", mailer.Job{ID: "1.srv", Owner: "alice@h1"}, mailer.Abort, "x")
	s.Send(m)
	waitFor(t, "the first run", func() bool { b, _ := os.ReadFile(out); return len(b) > 0 })
	s.Send(m) // queued
	s.Send(m) // dropped
	if !strings.Contains(logs.String(), "mail queue full; message dropped") {
		t.Errorf("no log line for the dropped message:\n%s", logs.String())
	}
	os.WriteFile(gate, nil, 0o644)
	s.Close(10 * time.Second)
	if b, _ := os.ReadFile(out); strings.Count(string(b), "run") != 2 {
		t.Errorf("mailer ran %d times, want 2", strings.Count(string(b), "run"))
	}

	// A mailer that hangs is killed after the timeout, with its children.
	path, out = fakeMailer(t, `echo run >> OUT; sleep 60 & sleep 60`)
	s = New(path, 0, 300*time.Millisecond, testLogger(&logs))
	start := time.Now()
	s.Send(m)
	s.Close(10 * time.Second)
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("a hanging mailer held the sender %v", d)
	}
	if !strings.Contains(logs.String(), "mailer timed out") {
		t.Errorf("no log line for the timeout:\n%s", logs.String())
	}
}
