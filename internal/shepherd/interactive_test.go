package shepherd

import (
	"bytes"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// qsubAddr dials only the ports qsub may listen on.
func TestQsubAddr(t *testing.T) {
	for _, tt := range []struct {
		port int
		want string // "" for refused
	}{
		{0, ""}, {-1, ""}, {1, ""}, {22, ""}, {proto.MinInteractivePort - 1, ""}, {65536, ""},
		{proto.MinInteractivePort, "qsubhost:1024"}, {65535, "qsubhost:65535"},
	} {
		got, err := qsubAddr(&proto.InteractiveSession{Host: "qsubhost", Port: tt.port})
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("qsubAddr(port %d) = %q, %v; want %q", tt.port, got, err, tt.want)
		}
	}
}

// privilegedListener listens on a free privileged port of 127.0.0.1
// (the test runs as root), or skips.
func privilegedListener(t *testing.T) net.Listener {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("listening on a privileged port needs root")
	}
	for p := proto.MinInteractivePort - 1; p > 900; p-- {
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			t.Cleanup(func() { ln.Close() })
			return ln
		}
	}
	t.Skip("no free privileged port")
	return nil
}

// Whatever keeps the shepherd from its qsub (nothing listens, a
// stranger speaks first, a listener closes at once, a privileged port),
// the job's comment says one neutral thing, and the reason is a note for
// the mom's log; a privileged port is not even dialed.
func TestQsubUnreachableComment(t *testing.T) {
	closedPort := func(t *testing.T) (int, func() int) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		return p, nil
	}
	// serve accepts on ln, writes reply to each connection and closes
	// it; count is how many it accepted before a marker connection of
	// the test's own (the kernel hands connections over in the order
	// they came, so one the shepherd made is counted).
	serve := func(t *testing.T, ln net.Listener, reply []byte) (int, func() int) {
		accepted := make(chan string, 16)
		go func() {
			defer close(accepted)
			for {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				nc.Write(reply)
				nc.Close()
				accepted <- nc.RemoteAddr().String()
			}
		}()
		count := func() int {
			marker, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer marker.Close()
			n := 0
			for from := range accepted {
				if from == marker.LocalAddr().String() {
					break
				}
				n++
			}
			return n
		}
		return ln.Addr().(*net.TCPAddr).Port, count
	}
	listen := func(t *testing.T) net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln
	}
	for _, tt := range []struct {
		name   string
		start  func(t *testing.T) (port int, dialed func() int)
		detail string // in the note
		dials  int    // connections the shepherd made, -1: not checked
	}{
		{"refused", closedPort, "connection refused", -1},
		{"stranger speaks", func(t *testing.T) (int, func() int) {
			return serve(t, listen(t), []byte("SSH-2.0-OpenSSH_9.6\r\n"))
		}, "qsub at 127.0.0.1:", 1},
		{"closed at once", func(t *testing.T) (int, func() int) { return serve(t, listen(t), nil) }, "qsub at 127.0.0.1:", 1},
		{"privileged", func(t *testing.T) (int, func() int) { return serve(t, privilegedListener(t), nil) }, "not dialed", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			port, dialed := tt.start(t)
			sh := &shepherd{job: &proto.MomJob{JobID: "1.srv", Interactive: &proto.InteractiveSession{
				Host: "127.0.0.1", Port: port, Cookie: bytes.Repeat([]byte{1}, proto.InteractiveCookieLen)}}}
			term, err := sh.openTerminal()
			if err == nil {
				term.close()
				t.Fatal("a terminal opened without a qsub")
			}
			res := sh.terminalFailed(err)
			if res.Comment != commentQsubUnreachable || res.ExitStatus != proto.JobExecFail1 {
				t.Errorf("comment %q, exit %d; want %q, %d", res.Comment, res.ExitStatus, commentQsubUnreachable, proto.JobExecFail1)
			}
			if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], tt.detail) {
				t.Errorf("notes %q; want the reason (%q) for the mom's log", res.Notes, tt.detail)
			}
			if dialed != nil {
				if n := dialed(); n != tt.dials {
					t.Errorf("the shepherd made %d connections, want %d", n, tt.dials)
				}
			}
		})
	}
	// A failure of the host's own is told as it is.
	sh := &shepherd{}
	if res := sh.terminalFailed(os.ErrPermission); res.Comment != "job exec failed: permission denied" || len(res.Notes) != 0 {
		t.Errorf("a local failure: comment %q notes %q", res.Comment, res.Notes)
	}
}
