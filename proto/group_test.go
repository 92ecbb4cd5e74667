package proto

import (
	"bytes"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// groupMember serves a listener as a member of a group: the leader
// completes the handshake, any other member names leader (PBSE_NOTLEADER).
func groupMember(t *testing.T, key []byte, leader func() string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	self := l.Addr().String()
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				c := NewConn(nc, 0)
				keyFor := func(Hello) ([]byte, error) { return key, nil }
				if to := leader(); to != self {
					ServerRedirect(c, "srv", keyFor, to)
					return
				}
				if _, err := ServerHandshake(c, "srv", keyFor); err != nil {
					return
				}
				c.Recv() // hold the connection until the client closes it
			}()
		}
	}()
	return self
}

// TestDialGroupFollowsTheLeader: a daemon given the members reaches the
// leader through a follower's answer, with its key checking that answer;
// while no member knows a leader, the caller hears "no quorum" once its
// timeout has passed.
func TestDialGroupFollowsTheLeader(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, 32)
	// The members read the leader's address on their own goroutines.
	var leaderAddr atomic.Value
	leaderAddr.Store("")
	current := func() string { return leaderAddr.Load().(string) }
	follower := groupMember(t, key, current)
	leader := groupMember(t, key, current)
	leaderAddr.Store(leader)
	c, err := DialGroup(DialOptions{Network: "tcp", Role: RoleMom, Name: "n1", Key: key, Timeout: 5 * time.Second}, []string{follower})
	if err != nil {
		t.Fatalf("through the follower: %v", err)
	}
	if got := c.conn.NetConn().RemoteAddr().String(); got != leader {
		t.Errorf("connected to %s, want the leader %s", got, leader)
	}
	c.Close()

	leaderless := groupMember(t, key, func() string { return "" })
	start := time.Now()
	_, err = DialGroup(DialOptions{Network: "tcp", Role: RoleMom, Name: "n1", Key: key, Timeout: 700 * time.Millisecond}, []string{leaderless})
	if CodeOf(err) != PBSE_NOQUORUM {
		t.Fatalf("no leader: %v, want PBSE_NOQUORUM", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("no leader: gave up after %v, want within the timeout", d)
	}
}
