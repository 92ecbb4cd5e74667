package connlimit

import (
	"net"
	"testing"
)

// pipeConn is one end of a net.Pipe whose closing the test can observe.
type pipeConn struct {
	net.Conn
	closed bool
}

func (p *pipeConn) Close() error { p.closed = true; return p.Conn.Close() }

func conn(t *testing.T) *pipeConn {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return &pipeConn{Conn: a}
}

func TestPendingEvictsOldestOfPeer(t *testing.T) {
	t.Parallel()
	l := New("test", Budget{Max: 100, PerPeer: 50, Pending: 10, PerPeerPending: 2}, nil)
	c1, c2, c3 := conn(t), conn(t), conn(t)
	s1 := l.Admit("a", c1)
	s2 := l.Admit("a", c2)
	if s1 == nil || s2 == nil {
		t.Fatal("first two refused")
	}
	s3 := l.Admit("a", c3)
	if s3 == nil || !c1.closed || c2.closed || c3.closed {
		t.Fatalf("third from a: slot %v, closed %v %v %v; want the oldest closed", s3, c1.closed, c2.closed, c3.closed)
	}
	s1.Release() // the victim's goroutine releases: no double count
	if total, pending := l.Counts(); total != 2 || pending != 2 {
		t.Fatalf("counts %d %d, want 2 2", total, pending)
	}
	// Another peer is not affected by a's budget.
	c4 := conn(t)
	if s := l.Admit("b", c4); s == nil || c2.closed || c3.closed {
		t.Fatal("peer b paid for a's pending connections")
	}
}

func TestEstablishedAreNeverEvicted(t *testing.T) {
	t.Parallel()
	l := New("test", Budget{Max: 3, PerPeer: 3, Pending: 3, PerPeerPending: 3}, nil)
	var cs []*pipeConn
	for i := 0; i < 3; i++ {
		c := conn(t)
		cs = append(cs, c)
		l.Admit("a", c).Established()
	}
	c := conn(t)
	if s := l.Admit("a", c); s != nil || !c.closed {
		t.Fatal("a fourth connection was admitted over Max with every slot established")
	}
	for _, c := range cs {
		if c.closed {
			t.Fatal("an established connection was closed")
		}
	}
}

func TestClassPendingEvictsAcrossPeers(t *testing.T) {
	t.Parallel()
	l := New("test", Budget{Max: 100, PerPeer: 100, Pending: 3, PerPeerPending: 3}, nil)
	old := conn(t)
	l.Admit("x", old)
	l.Admit("y", conn(t))
	l.Admit("z", conn(t))
	fresh := conn(t)
	s := l.Admit("w", fresh)
	if s == nil || !old.closed {
		t.Fatal("the class's oldest pending connection was not closed for a newcomer")
	}
	s.Established()
	s.Release()
	s.Release()
	if total, pending := l.Counts(); total != 2 || pending != 2 {
		t.Fatalf("counts %d %d after release, want 2 2", total, pending)
	}
}

func TestPerPeerTotal(t *testing.T) {
	t.Parallel()
	l := New("test", Budget{Max: 100, PerPeer: 2, Pending: 10, PerPeerPending: 10}, nil)
	l.Admit("a", conn(t)).Established()
	l.Admit("a", conn(t)).Established()
	c := conn(t)
	if l.Admit("a", c) != nil || !c.closed {
		t.Fatal("a third connection of one peer was admitted over PerPeer")
	}
	if l.Admit("b", conn(t)) == nil {
		t.Fatal("another peer was refused")
	}
}

// Stats counts refusals and evictions over the Limiter's life: the log
// line's count is reset at each line, the metrics' never.
func TestStatsCountRefusalsAndEvictions(t *testing.T) {
	t.Parallel()
	l := New("metrics", Budget{Max: 2, PerPeer: 2, Pending: 1, PerPeerPending: 1}, nil)
	s1 := l.Admit("a", conn(t))
	s1.Established()
	l.Admit("a", conn(t)) // pending
	l.Admit("b", conn(t)) // evicts a's pending one (Pending: 1)
	if st := l.Stats(); st.Class != "metrics" || st.Held != 2 || st.Pending != 1 || st.Evicted != 1 || st.Refused != 0 {
		t.Fatalf("after an eviction: %+v", st)
	}
	l.Admit("b", conn(t)).Established() // evicts b's pending one, takes its place
	if s := l.Admit("c", conn(t)); s != nil {
		t.Fatal("admitted over Max with every slot established")
	}
	if s := l.Admit("c", conn(t)); s != nil {
		t.Fatal("admitted over Max with every slot established")
	}
	if st := l.Stats(); st.Held != 2 || st.Pending != 0 || st.Evicted != 2 || st.Refused != 2 {
		t.Fatalf("after two refusals: %+v", st)
	}
}

// A trusted peer (the web listener's proxy) is bounded by the class
// alone.
func TestTrustPeer(t *testing.T) {
	t.Parallel()
	l := New("test", Budget{Max: 6, PerPeer: 2, Pending: 6, PerPeerPending: 2}, nil)
	l.TrustPeer("proxy")
	for i := 0; i < 5; i++ {
		s := l.Admit("proxy", conn(t))
		if s == nil {
			t.Fatalf("the proxy's connection %d refused", i)
		}
		s.Established()
	}
	l.Admit("a", conn(t)).Established()
	if s := l.Admit("proxy", conn(t)); s != nil {
		t.Fatal("the proxy was admitted over the class's Max")
	}
}
