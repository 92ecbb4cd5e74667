package qsub

import (
	"crypto/rand"
	"net"
	"os"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/interactive"
	"github.com/gopbs/gopbs/proto"
)

func TestListenAddrs(t *testing.T) {
	t.Parallel()
	ip := net.ParseIP
	for _, tt := range []struct {
		in   []net.IP
		want []string
	}{
		{nil, nil},
		{[]net.IP{ip("127.0.0.1")}, []string{"127.0.0.1"}},
		{[]net.IP{ip("192.0.2.7"), ip("::1"), ip("192.0.2.7"), ip("::ffff:192.0.2.7")}, []string{"192.0.2.7", "::1"}},
		{[]net.IP{ip("0.0.0.0"), ip("::"), ip("224.0.0.1"), ip("ff02::1"), ip("fe80::1"), nil}, nil},
		{[]net.IP{ip("fe80::1"), ip("2001:db8::5"), ip("169.254.1.1")}, []string{"2001:db8::5", "169.254.1.1"}},
	} {
		var got []string
		for _, a := range listenAddrs(tt.in) {
			got = append(got, a.String())
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("listenAddrs(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestAcceptBackoff(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ after, want time.Duration }{
		{0, 5 * time.Millisecond},
		{5 * time.Millisecond, 10 * time.Millisecond},
		{320 * time.Millisecond, 640 * time.Millisecond},
		{640 * time.Millisecond, time.Second},
		{time.Second, time.Second},
	} {
		if got := acceptBackoff(tt.after); got != tt.want {
			t.Errorf("acceptBackoff(%v) = %v, want %v", tt.after, got, tt.want)
		}
	}
}

// reachable reports whether something accepts connections at ip:port.
func reachable(ip string, port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// qsub -I listens on one port of each address of this host the name
// resolves to, and nowhere else (on Linux every 127/8 address is the
// host's, so 127.0.0.3 shows what a wildcard listener would take); an
// address that is not the host's is skipped, and a name with none is an
// error.
func TestListenOnTheNamesAddresses(t *testing.T) {
	t.Parallel()
	ip := net.ParseIP
	for _, tt := range []struct {
		name string
		ips  []net.IP
		want []string // addresses listened on; nil: an error
	}{
		{"one", []net.IP{ip("127.0.0.1")}, []string{"127.0.0.1"}},
		{"two, a repeat and one elsewhere", []net.IP{ip("127.0.0.1"), ip("203.0.113.7"), ip("127.0.0.2"), ip("127.0.0.1")}, []string{"127.0.0.1", "127.0.0.2"}},
		{"none of this host's", []net.IP{ip("203.0.113.7")}, nil},
		{"every interface", []net.IP{ip("0.0.0.0"), ip("::")}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := listenOn(tt.ips)
			if tt.want == nil {
				if err == nil {
					l.Close()
					t.Fatalf("listened on %v", l.lns)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			var got []string
			for _, ln := range l.lns {
				a := ln.Addr().(*net.TCPAddr)
				got = append(got, a.IP.String())
				if a.Port != l.port {
					t.Errorf("%v: port %d, want the one port %d", a, a.Port, l.port)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("listened on %v, want %v", got, tt.want)
			}
			for _, a := range tt.want {
				if !reachable(a, l.port) {
					t.Errorf("%s:%d is not reachable", a, l.port)
				}
			}
			if reachable("127.0.0.3", l.port) {
				t.Errorf("127.0.0.3:%d is reachable: qsub listens beyond the name's addresses", l.port)
			}
		})
	}
}

// qsub -I asks the server which host it knows this one as, and listens
// there only: the shepherd reaches it on that name's address, a
// connection to another address of the host is refused.
func TestInteractiveListensOnSubmitHost(t *testing.T) {
	t.Parallel()
	srv := &fakeServer{id: "5.srv", polls: []poll{{state: "Q"}}}
	done := make(chan string, 1)
	stray := make(chan bool, 1)
	srv.submitted = func(req *proto.SubmitRequest) {
		stray <- reachable("127.0.0.2", req.Interactive.Port)
		fakeShepherd(t, req, "5.srv", req.Interactive.Cookie, func(fc *interactive.Conn, _ interactive.Frame) string {
			fc.Send(&interactive.Frame{Kind: interactive.KindExit, Status: 0})
			return "ok"
		}, done)
	}
	rc, out, errs := testRun(t, config.PBSPro, []string{"-I"}, nil, "", srv)
	if rc != 0 {
		t.Fatalf("qsub -I exited %d\nstdout %q\nstderr %q", rc, out, errs)
	}
	if got := <-done; got != "ok" {
		t.Errorf("the shepherd: %s", got)
	}
	if <-stray {
		t.Error("127.0.0.2 reached qsub's port: it listens on every address, not the submit host's")
	}
	if !reflect.DeepEqual(srv.lookedUp, []string{"h1"}) {
		t.Errorf("qsub resolved %q, want the host the server named (h1)", srv.lookedUp)
	}
}

// shepherdConnect proves itself to qsub at addr as the shepherd of id.
func shepherdConnect(addr, id string, cookie []byte) error {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = interactive.NewConn(nc).Connect(id, cookie, rand.Reader)
	return err
}

func testListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// A flood of silent connections costs qsub at most pendingMax of them
// (a newcomer closes the oldest at once, long before its handshake
// time is up), and the shepherd, coming after them, is accepted.
func TestAcceptShepherdFlood(t *testing.T) {
	t.Parallel()
	ln := testListener(t)
	cookie := make([]byte, proto.InteractiveCookieLen)
	proven := make(chan *interactiveSession, 1)
	go acceptShepherd(ln, newStrangers(), "9.srv", cookie, proven)
	const n = 100
	closed := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func() {
			c.Read(make([]byte, 1))
			closed <- struct{}{}
		}()
	}
	// Before half the handshake time: only eviction closes them then.
	deadline := time.After(handshakeWait / 2)
	for got := 0; got < n-pendingMax; got++ {
		select {
		case <-closed:
		case <-deadline:
			t.Fatalf("qsub closed %d of %d silent connections within %v; want all but %d", got, n, handshakeWait/2, pendingMax)
		}
	}
	shep := make(chan error, 1)
	go func() { shep <- shepherdConnect(ln.Addr().String(), "9.srv", cookie) }()
	select {
	case s := <-proven:
		s.nc.Close()
	case <-time.After(10 * time.Second):
		t.Fatalf("the shepherd was not accepted after the flood: %v", <-shep)
	}
}

// acceptFailing fails its first fails accepts as a process out of
// descriptors does.
type acceptFailing struct {
	net.Listener
	fails int
}

func (l *acceptFailing) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// Accepts that fail (EMFILE) are tried again: the shepherd still gets
// in; the loop ends when the listener is closed.
func TestAcceptShepherdAfterErrors(t *testing.T) {
	t.Parallel()
	ln := &acceptFailing{Listener: testListener(t), fails: 3}
	cookie := make([]byte, proto.InteractiveCookieLen)
	proven := make(chan *interactiveSession, 1)
	ended := make(chan struct{})
	go func() {
		acceptShepherd(ln, newStrangers(), "9.srv", cookie, proven)
		close(ended)
	}()
	shep := make(chan error, 1)
	go func() { shep <- shepherdConnect(ln.Addr().String(), "9.srv", cookie) }()
	select {
	case s := <-proven:
		s.nc.Close()
	case <-time.After(10 * time.Second):
		t.Fatalf("the shepherd was not accepted after %d failed accepts: %v", 3, <-shep)
	}
	select {
	case <-ended:
		t.Fatal("the accept loop ended with its listener open")
	default:
	}
	ln.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the accept loop did not end with its listener closed")
	}
}
