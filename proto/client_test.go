package proto

import (
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveOnce listens on a Unix socket in a temporary directory and hands
// its first connection to serve (which owns it); it returns the path.
func serveOnce(t *testing.T, serve func(nc net.Conn)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "srv.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		serve(nc)
	}()
	return path
}

// refusingServer serves one connection on a Unix socket, whose handshake
// keyFor refuses.
func refusingServer(t *testing.T, keyFor func(Hello) ([]byte, error)) string {
	t.Helper()
	return serveOnce(t, func(nc net.Conn) { ServerHandshake(NewConn(nc, 0), "srv", keyFor) })
}

func TestDialSendsFirstRequestBehindHello(t *testing.T) {
	t.Parallel()
	got := make(chan []MsgType, 1)
	path := serveOnce(t, func(nc net.Conn) {
		// Both frames are read before anything is answered: a client that
		// waited for the Hello's answer would never send the second.
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		c := NewConn(nc, 0)
		h1, _, err1 := c.Recv()
		h2, _, err2 := c.Recv()
		got <- []MsgType{h1.Type, h2.Type}
		if err1 != nil || err2 != nil {
			return
		}
		c.Send(Header{Type: MsgHelloReply}, &HelloReply{Version: ProtocolVersion, ServerName: "srv"})
		c.Send(Header{Type: MsgReply, Seq: h2.Seq}, &SubmitReply{JobID: "1.srv"})
	})
	c, err := Dial(DialOptions{Network: "unix", Address: path, Role: RoleClient})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := c.Submit(&SubmitRequest{})
	if err != nil || id != "1.srv" {
		t.Fatalf("Submit = %q, %v; want 1.srv", id, err)
	}
	if g := <-got; g[0] != MsgHello || g[1] != MsgSubmit {
		t.Errorf("the server read %v before answering, want the Hello and the Submit", g)
	}
	if name := c.ServerName(); name != "srv" {
		t.Errorf("ServerName = %q, want srv (from the Hello's answer)", name)
	}
}

func TestDialRefusalComesWithFirstRequest(t *testing.T) {
	t.Parallel()
	path := refusingServer(t, func(Hello) ([]byte, error) { return nil, errors.New("only daemons here") })
	c, err := Dial(DialOptions{Network: "unix", Address: path, Role: RoleClient})
	if err != nil {
		t.Fatalf("Dial: %v (the Hello's answer is read with the first request)", err)
	}
	defer c.Close()
	_, err = c.Submit(&SubmitRequest{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Code == PBSE_NONE || !strings.Contains(pe.Text, "only daemons here") {
		t.Fatalf("Submit after a refused Hello = %v, want the server's refusal", err)
	}
	if _, err2 := c.Submit(&SubmitRequest{}); err2 == nil {
		t.Error("a client whose Hello was refused still submits")
	}
	if name := c.ServerName(); name != "" {
		t.Errorf("ServerName after a refusal = %q", name)
	}
}

// Hello gives the server's refusal to a caller that needs the server's
// name before any request, and is bounded by the client's timeout.
func TestHelloBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	path := refusingServer(t, func(Hello) ([]byte, error) { return nil, errors.New("only daemons here") })
	c, err := Dial(DialOptions{Network: "unix", Address: path, Role: RoleClient})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello(); err == nil || !strings.Contains(err.Error(), "only daemons here") {
		t.Errorf("Hello after a refusal = %v", err)
	}

	// A peer that never answers.
	silent := serveOnce(t, func(net.Conn) { time.Sleep(5 * time.Second) })
	c2, err := Dial(DialOptions{Network: "unix", Address: silent, Role: RoleClient, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	start := time.Now()
	if name := c2.ServerName(); name != "" || time.Since(start) > 3*time.Second {
		t.Errorf("ServerName of a silent peer = %q after %v, want \"\" within the timeout", name, time.Since(start))
	}
}
