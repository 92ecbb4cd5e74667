package integration

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// The red team's raft client, as an ordinary local user without the
// cluster key (issue 29): hashicorp/raft as a library, speaking its own
// transport to every member's raft port (batch port + 100). Each attack
// that once worked is made: a higher term to depose the leader,
// heartbeats of a leader that does not exist, a forged server record
// making bob a manager, an entry no member can decode, a snapshot, a
// vote request, and a TLS peer with a certificate of its own. Every one
// is refused, and the group serves throughout: qsub through every member
// works during the attacks, the term never takes the attacker's, bob is
// no manager and every member still answers.
func TestGroupRaftPortRefusesStrangers(t *testing.T) {
	t.Parallel()
	g := testcluster.NewGroup(t, 3)
	g.Members[0].MustRun("qmgr", "-c", "set server scheduling = False")
	leader := -1
	testcluster.WaitFor(t, "a leader", 20*time.Second, func() (bool, string) {
		leader = g.Leader(0)
		return leader >= 0, ""
	})
	term := func(from int) uint64 {
		out := g.Members[from].MustRun("qstat", "-Bf", "-1")
		for _, line := range strings.Split(out, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == proto.AttrServerTerm {
				n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				return n
			}
		}
		t.Fatalf("no %s in qstat -Bf:\n%s", proto.AttrServerTerm, out)
		return 0
	}
	before := term(0)

	// Submissions through every member while the attacks go on.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	var failed []string
	submitted := 0
	for i := range g.Members {
		wg.Add(1)
		go func(m *testcluster.Cluster) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := m.RunStdin("#!/bin/sh\n", "qsub")
				mu.Lock()
				if r.Code != 0 {
					failed = append(failed, r.Stderr)
				} else {
					submitted++
				}
				mu.Unlock()
			}
		}(g.Members[i])
	}

	tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 2*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	const forgedTerm = 1 << 40
	forged := model.NewObject("localhost")
	forged.Attrs[proto.AttrManagers] = "bob@*"
	b := &store.Batch{}
	b.PutServer(forged)
	forgedEntry, err := store.EncodeEntry([]*store.Batch{b})
	if err != nil {
		t.Fatal(err)
	}
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("127.0.0.1:1"), Addr: []byte("127.0.0.1:101")}
	attacks := []struct {
		name string
		do   func(id raft.ServerID, addr raft.ServerAddress) error
	}{
		{"AppendEntries with a higher term", func(id raft.ServerID, addr raft.ServerAddress) error {
			var resp raft.AppendEntriesResponse
			return tr.AppendEntries(id, addr, &raft.AppendEntriesRequest{RPCHeader: hdr, Term: forgedTerm}, &resp)
		}},
		{"a forged server record", func(id raft.ServerID, addr raft.ServerAddress) error {
			var resp raft.AppendEntriesResponse
			return tr.AppendEntries(id, addr, &raft.AppendEntriesRequest{RPCHeader: hdr, Term: forgedTerm + 1, PrevLogEntry: 1 << 30, PrevLogTerm: forgedTerm,
				Entries: []*raft.Log{{Index: 1<<30 + 1, Term: forgedTerm + 1, Type: raft.LogCommand, Data: forgedEntry}}, LeaderCommitIndex: 1<<30 + 1}, &resp)
		}},
		{"an undecodable entry (operation 99)", func(id raft.ServerID, addr raft.ServerAddress) error {
			var resp raft.AppendEntriesResponse
			return tr.AppendEntries(id, addr, &raft.AppendEntriesRequest{RPCHeader: hdr, Term: forgedTerm + 2, PrevLogEntry: 1 << 30, PrevLogTerm: forgedTerm,
				Entries: []*raft.Log{{Index: 1<<30 + 1, Term: forgedTerm + 2, Type: raft.LogCommand, Data: []byte{1, 1, 99, 0, 0}}}}, &resp)
		}},
		{"RequestVote", func(id raft.ServerID, addr raft.ServerAddress) error {
			var resp raft.RequestVoteResponse
			return tr.RequestVote(id, addr, &raft.RequestVoteRequest{RPCHeader: hdr, Term: forgedTerm + 3, LastLogIndex: 1 << 40, LastLogTerm: forgedTerm}, &resp)
		}},
		{"InstallSnapshot", func(id raft.ServerID, addr raft.ServerAddress) error {
			var resp raft.InstallSnapshotResponse
			return tr.InstallSnapshot(id, addr, &raft.InstallSnapshotRequest{RPCHeader: hdr, SnapshotVersion: 1, Term: forgedTerm + 4, LastLogIndex: 1 << 40, LastLogTerm: forgedTerm, Size: 16}, &resp, strings.NewReader("not a store file"))
		}},
		{"a TLS peer with its own certificate", func(id raft.ServerID, addr raft.ServerAddress) error {
			c, err := tls.Dial("tcp", string(addr), &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{strangerCert(t, string(id))}})
			if err != nil {
				return err
			}
			defer c.Close()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = c.Read(make([]byte, 1))
			return err
		}},
	}
	for _, a := range attacks {
		start := time.Now()
		for i, m := range g.Members {
			id := fmt.Sprintf("127.0.0.1:%d", m.BatchPort)
			if err := a.do(raft.ServerID(id), raft.ServerAddress(config.RaftAddr(id))); err == nil {
				t.Errorf("%s to member %d: accepted", a.name, i)
			}
		}
		t.Logf("%s, to every member: %v", a.name, time.Since(start))
	}
	// Heartbeats of a leader that does not exist, to every member, for
	// three election timeouts.
	until := time.Now().Add(3 * time.Second)
	beats, got := 0, 0
	for time.Now().Before(until) {
		for _, m := range g.Members {
			id := fmt.Sprintf("127.0.0.1:%d", m.BatchPort)
			var resp raft.AppendEntriesResponse
			beats++
			if tr.AppendEntries(raft.ServerID(id), raft.ServerAddress(config.RaftAddr(id)), &raft.AppendEntriesRequest{RPCHeader: hdr, Term: forgedTerm + 5}, &resp) == nil {
				got++
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got > 0 {
		t.Errorf("%d of %d forged heartbeats accepted", got, beats)
	}
	mu.Lock()
	n := submitted
	mu.Unlock()
	want := n + 9
	testcluster.WaitFor(t, "submissions after the attacks", 30*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return submitted >= want, fmt.Sprintf("%d", submitted)
	})
	close(stop)
	wg.Wait()
	if len(failed) > 0 {
		t.Errorf("%d qsubs failed during the attacks, the first: %s", len(failed), failed[0])
	}
	for i := range g.Members {
		if after := term(i); after >= forgedTerm || after < before {
			t.Errorf("member %d: term %d (before the attacks %d)", i, after, before)
		}
	}
	if l := g.Leader(0); l != leader {
		t.Logf("the leader changed from member %d to %d (an election of the group's own)", leader, l)
	}
	if out := g.Members[0].MustRun("qmgr", "-c", "list server"); strings.Contains(out, "bob") {
		t.Errorf("the forged record reached the server:\n%s", out)
	}
	t.Logf("%d submissions during the attacks, none failed; %d forged heartbeats refused", submitted, beats)
}

// strangerCert is a TLS certificate of a key of its own, named as a
// member.
func strangerCert(t *testing.T, name string) tls.Certificate {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}
}
