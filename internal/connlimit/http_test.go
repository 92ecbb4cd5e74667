package connlimit

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// A Listener admits connections through its budget: an established one
// keeps its place, a newcomer beyond the budget is told the refusal and
// closed, and a closed connection gives its slot back.
func TestListenerAdmitsAndRefuses(t *testing.T) {
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
