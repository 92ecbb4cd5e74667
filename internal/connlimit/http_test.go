package connlimit

import (
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// A Listener admits connections through its budget: an established one
// keeps its place, a newcomer beyond the budget is told the refusal and
// closed, and a closed connection gives its slot back.
func TestListenerAdmitsAndRefuses(t *testing.T) {
	t.Parallel()
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	lim := New("test", Budget{Max: 1, PerPeer: 1, Pending: 1, PerPeerPending: 1}, hclog.NewNullLogger())
	l := &Listener{Listener: nl, Limit: lim, Refusal: "HTTP/1.1 503 Service Unavailable\r\n\r\n"}
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	first, err := net.Dial("tcp", nl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	c1 := <-accepted
	first.Write([]byte("x"))
	buf := make([]byte, 1)
	c1.Read(buf)
	c1.(*Conn).slot.Established()

	second, err := net.Dial("tcp", nl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	second.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(second)
	if !strings.HasPrefix(string(got), "HTTP/1.1 503") {
		t.Errorf("a connection beyond the budget read %q, want the refusal", got)
	}
	c1.Close()
	third, err := net.Dial("tcp", nl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the slot given back was not reused")
	}
}

// Every address of this host is one peer: a local user connecting from
// many loopback addresses holds one peer's share, not one per address
// (before, five 127.x addresses took five shares, the whole budget).
func TestListenerCountsThisHostAsOnePeer(t *testing.T) {
	t.Parallel()
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	lim := New("test", Budget{Max: 16, PerPeer: 2, Pending: 16, PerPeerPending: 2}, hclog.NewNullLogger())
	l := &Listener{Listener: nl, Limit: lim}
	var accepted []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for len(accepted) < 8 {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.(*Conn).slot.Established() // as a request in would
			accepted = append(accepted, c)
		}
	}()
	for i := 2; i < 10; i++ {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(i))}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", nl.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for lim.Stats().Refused < 6 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if st := lim.Stats(); st.Held != 2 || st.Refused != 6 {
		t.Fatalf("8 connections from 8 loopback addresses: %+v; want 2 held and 6 refused", st)
	}
	nl.Close()
	<-done
	for _, c := range accepted {
		if c.(*Conn).Peer() != HostPeer {
			t.Errorf("a loopback connection's peer is %q", c.(*Conn).Peer())
		}
	}
}

func TestAddrKey(t *testing.T) {
	t.Parallel()
	own := func(a netip.Addr) bool { return a == netip.MustParseAddr("192.0.2.2") }
	for _, tt := range []struct{ addr, want string }{
		{"127.0.0.1", HostPeer},
		{"127.0.0.2", HostPeer},
		{"::1", HostPeer},
		{"::ffff:127.0.0.3", HostPeer},
		{"192.0.2.2", HostPeer},
		{"::ffff:192.0.2.2", HostPeer},
		{"192.0.2.3", "192.0.2.3"},
		{"2001:db8::1", "2001:db8::1"},
		{"::ffff:10.0.0.1", "10.0.0.1"},
	} {
		if got := AddrKey(netip.MustParseAddr(tt.addr), own); got != tt.want {
			t.Errorf("AddrKey(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}
