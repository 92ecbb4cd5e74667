package ha

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/store"
)

func testKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// freeBatchPort is a batch port whose raft port is free on 127.0.0.1.
func freeBatchPort(t *testing.T) int {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p <= config.RaftPortOffset {
			continue
		}
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			l.Close()
			return p - config.RaftPortOffset
		}
	}
}

// layer starts a stream layer for member self of members.
func layer(t *testing.T, self string, key []byte, members []string, resolve func(string) ([]net.IP, error)) *streamLayer {
	t.Helper()
	bind, err := net.ResolveTCPAddr("tcp", config.RaftAddr(self))
	if err != nil {
		t.Fatal(err)
	}
	s, err := newStreamLayer(streamConfig{Self: self, Bind: bind, Key: key, Members: func() []string { return members }, Logger: hclog.NewNullLogger(), Resolve: resolve})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// acceptOne returns the next connection s hands raft, or nil within d.
func acceptOne(s *streamLayer, d time.Duration) net.Conn {
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := s.Accept()
		if err != nil {
			c = nil
		}
		ch <- c
	}()
	select {
	case c := <-ch:
		return c
	case <-time.After(d):
		return nil
	}
}

// TestRaftPortAdmitsOnlyMembers: members holding the cluster key talk;
// a plain TCP peer (hashicorp/raft's own transport), a TLS peer with
// another key, a key holder naming no member or connecting from another
// host's address are each refused before raft reads a byte of theirs; a
// member does not talk to a port that cannot prove the key.
func TestRaftPortAdmitsOnlyMembers(t *testing.T) {
	key := testKey(t)
	a, b, c := fmt.Sprintf("127.0.0.1:%d", freeBatchPort(t)), fmt.Sprintf("127.0.0.1:%d", freeBatchPort(t)), fmt.Sprintf("127.0.0.1:%d", freeBatchPort(t))
	group := []string{a, b}
	la := layer(t, a, key, group, nil)
	lb := layer(t, b, key, group, nil)

	// A member to a member: the bytes arrive, both ways.
	conn, err := la.Dial(raft.ServerAddress(config.RaftAddr(b)), 2*time.Second)
	if err != nil {
		t.Fatalf("member to member: %v", err)
	}
	got := acceptOne(lb, 5*time.Second)
	if got == nil {
		t.Fatal("the member's connection was not handed to raft")
	}
	go conn.Write([]byte("ping"))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(got, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read %q, %v", buf, err)
	}
	conn.Close()
	got.Close()

	refused := func(name string, try func() error) {
		t.Helper()
		errc := make(chan error, 1)
		go func() { errc <- try() }()
		if c := acceptOne(lb, 1500*time.Millisecond); c != nil {
			t.Errorf("%s: handed to raft", name)
			c.Close()
		}
		select {
		case err := <-errc:
			if err == nil {
				t.Errorf("%s: the peer saw no refusal", name)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the peer's attempt did not end", name)
		}
	}

	// hashicorp/raft's plain TCP transport, as the red team's client:
	// an AppendEntries with a higher term gets nowhere.
	refused("plain raft transport", func() error {
		tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 2*time.Second, io.Discard)
		if err != nil {
			return fmt.Errorf("transport: %w (unexpected)", err)
		}
		defer tr.Close()
		var resp raft.AppendEntriesResponse
		return tr.AppendEntries(raft.ServerID(b), raft.ServerAddress(config.RaftAddr(b)), &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax}, Term: 1 << 40, LeaderCommitIndex: 1 << 40}, &resp)
	})
	// TLS with a certificate of another key, claiming to be a.
	refused("another key", func() error {
		cert, err := memberCert(raftIdentity(testKey(t)), a)
		if err != nil {
			return fmt.Errorf("cert: %w (unexpected)", err)
		}
		tc, err := tls.Dial("tcp", config.RaftAddr(b), &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})
		if err != nil {
			return err
		}
		defer tc.Close()
		tc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = tc.Read(make([]byte, 1))
		return err
	})
	// The cluster key, but a name that is not in the group.
	refused("a stranger's name", func() error {
		lc := layer(t, c, key, []string{a, b, c}, nil)
		conn, err := lc.Dial(raft.ServerAddress(config.RaftAddr(b)), 2*time.Second)
		if err != nil {
			return err
		}
		defer conn.Close()
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		return err
	})
	// The cluster key and a member's name, from an address that is not
	// that member's host's.
	lb.resolve = func(string) ([]net.IP, error) { return []net.IP{net.ParseIP("127.0.0.9")}, nil }
	refused("a member's name from elsewhere", func() error {
		conn, err := la.Dial(raft.ServerAddress(config.RaftAddr(b)), 2*time.Second)
		if err != nil {
			return err
		}
		defer conn.Close()
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		return err
	})
	lb.resolve = lookupIPs

	// A member does not speak to a port that cannot prove the key.
	imp, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{mustCert(t, testKey(t), b)}})
	if err != nil {
		t.Fatal(err)
	}
	defer imp.Close()
	go func() {
		for {
			c, err := imp.Accept()
			if err != nil {
				return
			}
			go func() { c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	impostor := imp.Addr().String()
	la2 := layer(t, fmt.Sprintf("127.0.0.1:%d", freeBatchPort(t)), key, nil, nil)
	la2.members = func() []string {
		host, ps, _ := net.SplitHostPort(impostor)
		var port int
		fmt.Sscan(ps, &port)
		return []string{net.JoinHostPort(host, fmt.Sprint(port-config.RaftPortOffset))}
	}
	if _, err := la2.Dial(raft.ServerAddress(impostor), 2*time.Second); err == nil || !strings.Contains(err.Error(), "cluster key") {
		t.Errorf("dial to an impostor: %v, want a refusal naming the cluster key", err)
	}
	if _, err := la.Dial("127.0.0.1:1", time.Second); err == nil {
		t.Error("dialed an address that is no member's")
	}
}

func mustCert(t *testing.T, key []byte, name string) tls.Certificate {
	t.Helper()
	c, err := memberCert(raftIdentity(key), name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRaftPortSilentFlood: strangers' silent connections, more than the
// pending budget, do not keep a member out: the oldest are closed for
// newcomers and the member's handshake gets through.
func TestRaftPortSilentFlood(t *testing.T) {
	key := testKey(t)
	a, b := fmt.Sprintf("127.0.0.1:%d", freeBatchPort(t)), fmt.Sprintf("127.0.0.1:%d", freeBatchPort(t))
	la := layer(t, a, key, []string{a, b}, nil)
	lb := layer(t, b, key, []string{a, b}, nil)
	var silent []net.Conn
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	for i := 0; i < 3*raftBudget.Pending; i++ {
		c, err := net.Dial("tcp", config.RaftAddr(b))
		if err != nil {
			t.Fatal(err)
		}
		silent = append(silent, c)
	}
	conn, err := la.Dial(raft.ServerAddress(config.RaftAddr(b)), 5*time.Second)
	if err != nil {
		t.Fatalf("a member behind %d silent connections: %v", len(silent), err)
	}
	defer conn.Close()
	if c := acceptOne(lb, 5*time.Second); c == nil {
		t.Fatal("the member's connection was not handed to raft")
	} else {
		c.Close()
	}
}

// TestCheckReachable: a member named by an address that is loopback on
// its host is refused when another member is elsewhere.
func TestCheckReachable(t *testing.T) {
	resolve := func(host string) ([]net.IP, error) {
		switch host {
		case "a", "b":
			return []net.IP{net.ParseIP("10.0.0.1")}, nil
		case "lo":
			return []net.IP{net.ParseIP("127.0.0.1")}, nil
		}
		return nil, errors.New("no such host")
	}
	for _, tc := range []struct {
		self  string
		ip    string
		peers []string
		ok    bool
	}{
		{"a:15001", "10.0.0.1", []string{"a:15001", "b:15001"}, true},
		{"a:15001", "127.0.1.1", []string{"a:15001", "b:15001"}, false},
		{"lo:15001", "127.0.0.1", []string{"lo:15001", "lo:15011"}, true},
		{"lo:15001", "127.0.0.1", []string{"lo:15001", "gone:15001"}, true},
	} {
		err := checkReachable(tc.self, net.ParseIP(tc.ip), tc.peers, resolve)
		if (err == nil) != tc.ok {
			t.Errorf("%s at %s among %v: %v, want ok=%v", tc.self, tc.ip, tc.peers, err, tc.ok)
		}
	}
}

// TestCheckLogRefusesUndecodable: a log holding, past what the store
// applied, an entry the store cannot decode keeps the member out; the
// same entry already applied (or a good one) does not.
func TestCheckLogRefusesUndecodable(t *testing.T) {
	logs, err := openLogStore(t.TempDir() + "/raft.db")
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	good, err := store.EncodeEntry([]*store.Batch{{}})
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte{1, 1, 99, 0, 0}
	if err := logs.StoreLogs([]*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogCommand, Data: good},
		{Index: 2, Term: 1, Type: raft.LogNoop},
		{Index: 3, Term: 2, Type: raft.LogCommand, Data: bad},
	}); err != nil {
		t.Fatal(err)
	}
	if err := checkLog(logs, 3); err != nil {
		t.Errorf("applied already: %v", err)
	}
	err = checkLog(logs, 1)
	if !errors.Is(err, store.ErrMalformedEntry) || !strings.Contains(err.Error(), "entry 3") || !strings.Contains(err.Error(), "-ha-rebuild") {
		t.Errorf("entry 3 unapplied: %v, want a refusal naming it and the way out", err)
	}
}
