package qsub

import (
	"crypto/rand"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/interactive"
	"github.com/gopbs/gopbs/proto"
)

// fakeShepherd connects to qsub -I as the job's shepherd would, with
// cookie, and plays script against it; it reports on done what qsub sent.
func fakeShepherd(t *testing.T, req *proto.SubmitRequest, id string, cookie []byte, script func(*interactive.Conn, interactive.Frame) string, done chan<- string) {
	go func() {
		nc, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(req.Interactive.Port)))
		if err != nil {
			done <- "dial: " + err.Error()
			return
		}
		defer nc.Close()
		fc := interactive.NewConn(nc)
		setup, err := fc.Connect(id, cookie, rand.Reader)
		if err != nil {
			done <- "handshake: " + err.Error()
			return
		}
		done <- script(fc, setup)
	}()
}

// qsub -I submits the job with its port and a fresh secret, says it
// waits, refuses a connection that does not hold the secret, relays the
// proven shepherd's output and its own standard input (not a terminal:
// sent as commands, then its end), and exits with the job's status.
func TestInteractiveRelay(t *testing.T) {
	t.Parallel()
	srv := &fakeServer{id: "7.srv", polls: []poll{{state: "Q"}}}
	done := make(chan string, 2)
	srv.submitted = func(req *proto.SubmitRequest) {
		if req.Interactive == nil || req.Interactive.Port == 0 || len(req.Interactive.Cookie) != proto.InteractiveCookieLen {
			t.Errorf("submission's interactive session: %+v", req.Interactive)
			return
		}
		wrong := make([]byte, proto.InteractiveCookieLen)
		proven := func(fc *interactive.Conn, setup interactive.Frame) string {
			if setup.Tty {
				return "setup says a terminal"
			}
			fc.SendData(interactive.KindData, []byte("hello from the job\n"))
			fc.SendData(interactive.KindStderr, []byte("job's stderr\n"))
			fc.Send(&interactive.Frame{Kind: interactive.KindNotice, Data: []byte("PBS: a notice")})
			var got strings.Builder
			for {
				f, err := fc.Recv()
				if err != nil {
					return "recv: " + err.Error()
				}
				if f.Kind == interactive.KindEOF {
					break
				}
				got.Write(f.Data)
			}
			fc.Send(&interactive.Frame{Kind: interactive.KindExit, Status: 3})
			return got.String()
		}
		// The stranger first, refused before the proven shepherd dials:
		// once the job ends qsub no longer listens.
		stranger := make(chan string, 1)
		fakeShepherd(t, req, "7.srv", wrong, func(*interactive.Conn, interactive.Frame) string { return "a stranger got in" }, stranger)
		go func() {
			done <- <-stranger
			fakeShepherd(t, req, "7.srv", req.Interactive.Cookie, proven, done)
		}()
	}
	rc, out, errs := testRun(t, config.PBSPro, []string{"-I"}, nil, "echo hi; exit 3\n", srv)
	if rc != 3 {
		t.Errorf("qsub -I exited %d, want the job's 3\nstdout %q\nstderr %q", rc, out, errs)
	}
	for _, want := range []string{"qsub: waiting for job 7.srv to start\n", "qsub: job 7.srv ready\n\n", "hello from the job\n", "qsub: job 7.srv completed\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout %q lacks %q", out, want)
		}
	}
	if !strings.Contains(errs, "job's stderr\n") || !strings.Contains(errs, "PBS: a notice\n") {
		t.Errorf("stderr %q lacks the job's stderr or the notice", errs)
	}
	results := []string{<-done, <-done}
	if !(results[0] == "echo hi; exit 3\n" && strings.HasPrefix(results[1], "handshake: ") ||
		results[1] == "echo hi; exit 3\n" && strings.HasPrefix(results[0], "handshake: ")) {
		t.Errorf("the shepherds saw %q; want the commands once and the stranger refused", results)
	}
	if srv.got != nil && srv.got.Script != nil && len(srv.got.Script) > 0 {
		t.Errorf("qsub -I sent standard input as the script: %q", srv.got.Script)
	}
}

// A job that ends without its shepherd connecting (deleted, or failed to
// start) ends qsub's wait with OpenPBS's words and status 1.
func TestInteractiveJobGone(t *testing.T) {
	t.Parallel()
	srv := &fakeServer{id: "8.srv", polls: []poll{{state: "Q"}, {state: "F", exit: "-1"}}}
	rc, out, errs := testRun(t, config.PBSPro, []string{"-I"}, nil, "", srv)
	if rc != 1 || !strings.Contains(out, "waiting for job 8.srv to start") || !strings.Contains(errs, "job 8.srv apparently deleted") {
		t.Errorf("rc %d stdout %q stderr %q", rc, out, errs)
	}
}
