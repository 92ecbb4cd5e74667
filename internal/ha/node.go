// Package ha runs pbs_server as a member of a replicated group
// (PBS_SERVER_PEERS) on hashicorp/raft. The store is the replicated state
// machine: the leader's group committer turns each group of changes into
// one log entry (store.Replicator) and answers only once a majority holds
// it and it is applied; every member applies the entries to its own store
// (fsm). Only the leader runs the server (internal/server), loaded from
// its store as after a restart; a follower serves no state: its batch
// port answers daemons with the leader's address (proto.ServerRedirect),
// its Unix socket relays local commands to the leader (relay.go).
package ha

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// Serving is the server a leader runs.
type Serving interface {
	Close() error
	// CloseKeepingListeners stops serving as Close does but leaves the
	// listeners it was started with open and returns them (nil for one
	// it had not), for the member to follow on.
	CloseKeepingListeners() (unix, tcp net.Listener, err error)
	ShutdownRequested() <-chan struct{}
	Reconfigure()
}

// Config is what a member needs.
type Config struct {
	Self  string   // this member's batch address, as in Peers
	Peers []string // every member's batch address (PBS_SERVER_PEERS)
	// Dir holds raft's log (raft.db) and snapshots: server_priv/raft.
	Dir   string
	Store *store.Store
	// Rebuild starts a member without bootstrapping the group (its raft
	// state was set aside, or it is new and waits to be added): it waits
	// for the leader to send it everything.
	Rebuild    bool
	ServerName string
	SocketPath string
	TCPAddr    string // the batch listener, ":port"
	Key        []byte // the cluster key
	Logger     hclog.Logger
	// Start loads the server from the store and starts serving, on
	// becoming leader. fence tells the server whether it still leads;
	// unix and tcp are the follower's listeners for SocketPath and
	// TCPAddr, handed over open (nil when not configured).
	Start func(fence func() error, unix, tcp net.Listener) (Serving, error)
	// Fatal stops the process: the store could not apply a committed
	// entry, so this member cannot go on (a restart replays it).
	Fatal func(error)
	// SnapshotEvery, when not zero, is how many entries raft lets pass
	// between snapshots (and keeps after one): tests make it small so
	// that a member is sent a snapshot. Zero is raft's default (8192).
	SnapshotEvery uint64
}

// Raft's timing: a follower that hears nothing for a second starts an
// election; a leader that cannot reach a majority for half a second steps
// down (and stops serving), before any other member can be elected.
const (
	heartbeatTimeout   = time.Second
	electionTimeout    = time.Second
	leaderLeaseTimeout = 500 * time.Millisecond
	// applyTimeout bounds the wait for a majority on one commit.
	applyTimeout = 10 * time.Second
	// noQuorumAfter: a member leaderless for longer than this answers
	// at once that the group has no quorum (an election takes less).
	noQuorumAfter = 3 * time.Second
)

// Node is a running member.
type Node struct {
	cfg  Config
	log  hclog.Logger
	raft *raft.Raft
	// raftUp is raft once started, for the raft port's goroutines
	// (members), which run before Start sets raft.
	raftUp atomic.Pointer[raft.Raft]
	logs   *logStore
	trans  *raft.NetworkTransport

	mu sync.Mutex
	// leaderless is since when no leader was known (zero: one is).
	leaderless time.Time
	srv        Serving
	follow     *follower
	shutdown   chan struct{} // closed when the leader's server asks (qterm)
	stop       chan struct{}
	done       chan struct{}
}

// Start opens raft's state under cfg.Dir, joins (or bootstraps) the group
// and begins following; the member serves once it leads.
func Start(cfg Config) (*Node, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", cfg.Dir, err)
	}
	n := &Node{cfg: cfg, log: cfg.Logger.Named("ha"), shutdown: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}), leaderless: time.Now()}
	logs, err := openLogStore(filepath.Join(cfg.Dir, "raft.db"))
	if err != nil {
		return nil, err
	}
	n.logs = logs
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, n.log.Named("snapshots"))
	if err != nil {
		logs.Close()
		return nil, fmt.Errorf("raft snapshots in %s: %w", cfg.Dir, err)
	}
	if list, err := snaps.List(); err != nil {
		logs.Close()
		return nil, fmt.Errorf("raft snapshots in %s are damaged (left untouched): %w; rebuild this member with pbs_server -ha-rebuild", cfg.Dir, err)
	} else if len(list) > 0 {
		// Read the newest snapshot's meta and data once: raft would
		// skip a damaged one silently and fall back to an older one.
		if _, rc, err := snaps.Open(list[0].ID); err != nil {
			logs.Close()
			return nil, fmt.Errorf("raft snapshot %s is damaged (left untouched): %w; rebuild this member with pbs_server -ha-rebuild", filepath.Join(cfg.Dir, "snapshots", list[0].ID), err)
		} else {
			_, err := io.Copy(io.Discard, rc)
			if cerr := rc.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				logs.Close()
				return nil, fmt.Errorf("raft snapshot %s is damaged (left untouched): %w; rebuild this member with pbs_server -ha-rebuild", filepath.Join(cfg.Dir, "snapshots", list[0].ID), err)
			}
		}
	}
	raftAddr := config.RaftAddr(cfg.Self)
	adv, err := net.ResolveTCPAddr("tcp", raftAddr)
	if err != nil {
		logs.Close()
		return nil, fmt.Errorf("raft address %s: %w", raftAddr, err)
	}
	if err := checkReachable(cfg.Self, adv.IP, cfg.Peers, lookupIPs); err != nil {
		logs.Close()
		return nil, err
	}
	// The raft port listens on this member's own address only and
	// speaks only to members holding the cluster key (stream.go).
	stream, err := newStreamLayer(streamConfig{Self: cfg.Self, Bind: adv, Key: cfg.Key, Members: n.members, Logger: n.log.Named("raftport")})
	if err != nil {
		logs.Close()
		return nil, err
	}
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: stream, MaxPool: 3, Timeout: 10 * time.Second, Logger: n.log.Named("transport")})
	n.trans = trans
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.Self)
	rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = heartbeatTimeout, electionTimeout, leaderLeaseTimeout
	// The store keeps the index it applied: a restart replays only the
	// entries after it, and never reloads a snapshot over the store.
	rc.NoSnapshotRestoreOnStart = true
	if cfg.SnapshotEvery > 0 {
		rc.SnapshotThreshold, rc.TrailingLogs, rc.SnapshotInterval = cfg.SnapshotEvery, cfg.SnapshotEvery, time.Second
	}
	rc.Logger = n.log.Named("raft")
	applied, err := cfg.Store.Applied()
	if err != nil {
		n.closeRaftState()
		return nil, err
	}
	if err := checkLog(logs, applied); err != nil {
		n.closeRaftState()
		return nil, err
	}
	if !cfg.Rebuild {
		has, err := raft.HasExistingState(logs, logs, snaps)
		if err != nil {
			n.closeRaftState()
			return nil, fmt.Errorf("raft state in %s: %w", cfg.Dir, err)
		}
		if !has {
			var servers []raft.Server
			for _, p := range cfg.Peers {
				servers = append(servers, raft.Server{ID: raft.ServerID(p), Address: raft.ServerAddress(config.RaftAddr(p))})
			}
			if err := raft.BootstrapCluster(rc, logs, logs, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
				n.closeRaftState()
				return nil, fmt.Errorf("bootstrap the group: %w", err)
			}
		}
	}
	r, err := raft.NewRaft(rc, &fsm{st: cfg.Store, fatal: cfg.Fatal}, logs, logs, snaps, trans)
	if err != nil {
		n.closeRaftState()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	n.raft = r
	n.raftUp.Store(r)
	cfg.Store.SetReplicator(n)
	if err := n.startFollowing(nil, nil); err != nil {
		r.Shutdown().Error()
		n.closeRaftState()
		return nil, err
	}
	go n.loop()
	n.log.Info("member started", "self", cfg.Self, "raft", raftAddr, "peers", cfg.Peers)
	return n, nil
}

func (n *Node) closeRaftState() {
	if n.trans != nil {
		n.trans.Close()
	}
	n.logs.Close()
}

// members is every member the raft port speaks to: those of
// PBS_SERVER_PEERS and those of the group's latest configuration (a
// member added with qmgr, or one the configuration still names).
func (n *Node) members() []string {
	out := append([]string(nil), n.cfg.Peers...)
	if r := n.raftUp.Load(); r != nil {
		if f := r.GetConfiguration(); f.Error() == nil {
			for _, s := range f.Configuration().Servers {
				out = append(out, string(s.ID))
			}
		}
	}
	return out
}

// checkReachable refuses a member address that resolves to a loopback
// address on this host while other members are elsewhere (Debian's
// "127.0.1.1 hostname" line): its raft port, bound to that address,
// could not be reached by them.
func checkReachable(self string, ip net.IP, peers []string, resolve func(string) ([]net.IP, error)) error {
	if !ip.IsLoopback() {
		return nil
	}
	for _, p := range peers {
		host, _, err := net.SplitHostPort(p)
		if err != nil || p == self {
			continue
		}
		ips, err := resolve(host)
		if err != nil {
			continue
		}
		for _, pip := range ips {
			if !pip.IsLoopback() {
				return fmt.Errorf("%s: this member's address %s resolves to %s, a loopback address, on this host, but member %s is at %s: the raft port would be unreachable from it; name this member by an address the others reach (or fix /etc/hosts)", config.KeyServerPeers, self, ip, p, pip)
			}
		}
	}
	return nil
}

// ShutdownRequested is closed when the leader's server was asked to stop
// (qterm): the member stops.
func (n *Node) ShutdownRequested() <-chan struct{} { return n.shutdown }

// Reconfigure asks the leader's scheduler to re-read its configuration
// (SIGHUP) when this member leads; a follower calls no scheduler.
func (n *Node) Reconfigure() {
	n.mu.Lock()
	srv := n.srv
	n.mu.Unlock()
	if srv != nil {
		srv.Reconfigure()
	}
}

// Replicate commits entry through the group (store.Replicator): it
// returns once a majority holds it and this member applied it.
func (n *Node) Replicate(entry []byte) error {
	// An entry no member could apply would stop them all once
	// committed: refuse it before it reaches the log.
	if err := store.CheckEntry(entry); err != nil {
		return fmt.Errorf("refused before the group's log: %w", err)
	}
	f := n.raft.Apply(entry, applyTimeout)
	if err := f.Error(); err != nil {
		return proto.Errorf(proto.PBSE_NOQUORUM, "(%v)", err)
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

// fence is the leader's server's check that it still leads: a status
// answer grants a lease only while it does.
func (n *Node) fence() error {
	if n.raft.State() != raft.Leader {
		return proto.NewError(proto.PBSE_NOQUORUM)
	}
	return nil
}

// Leader is the batch address of the group's leader ("" while none).
func (n *Node) Leader() string {
	_, id := n.raft.LeaderWithID()
	return string(id)
}

// Status describes the group for qstat -Bf: the members, the leader and
// the term.
func (n *Node) Status() (members []string, leader string, term uint64) {
	if f := n.raft.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			members = append(members, string(s.ID))
		}
	}
	return members, n.Leader(), n.raft.CurrentTerm()
}

// ChangeMember adds the member at batch address member to the group (as
// a voter; it must have been started with -ha-join, so that it waits to
// be sent the group's state) or removes it.
func (n *Node) ChangeMember(add bool, member string) error {
	if _, err := config.ParsePeers(member); err != nil || member == "" {
		return proto.Errorf(proto.PBSE_BADATVAL, "%s: want one host:port", member)
	}
	var f raft.IndexFuture
	if add {
		f = n.raft.AddVoter(raft.ServerID(member), raft.ServerAddress(config.RaftAddr(member)), 0, applyTimeout)
	} else {
		f = n.raft.RemoveServer(raft.ServerID(member), 0, applyTimeout)
	}
	if err := f.Error(); err != nil {
		return proto.Errorf(proto.PBSE_NOQUORUM, "(group change: %v)", err)
	}
	n.log.Info("group changed", "add", add, "member", member)
	return nil
}

// loop starts the server when this member becomes leader and stops it
// when it is no longer.
func (n *Node) loop() {
	defer close(n.done)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		}
		leading := n.raft.State() == raft.Leader
		n.mu.Lock()
		if n.Leader() == "" {
			if n.leaderless.IsZero() {
				n.leaderless = time.Now()
			}
		} else {
			n.leaderless = time.Time{}
		}
		srv := n.srv
		n.mu.Unlock()
		switch {
		case leading && srv == nil:
			n.lead()
		case !leading && srv != nil:
			n.log.Warn("no longer the leader: stopping the server")
			// The listeners stay open from server to follower: a
			// command that connects meanwhile is relayed, not refused.
			unix, tcp := n.stopServing(true)
			if err := n.startFollowing(unix, tcp); err != nil {
				n.cfg.Fatal(err)
				return
			}
		case srv != nil:
			select {
			case <-srv.ShutdownRequested():
				select {
				case <-n.shutdown:
				default:
					close(n.shutdown)
				}
			default:
			}
		}
	}
}

// lead takes over: every entry committed before is applied first, then
// the server loads the store as after a restart.
func (n *Node) lead() {
	start := time.Now()
	if err := n.raft.Barrier(applyTimeout).Error(); err != nil {
		n.log.Warn("elected, but the log could not be applied yet", "error", err)
		return
	}
	var unix, tcp net.Listener
	if f := n.takeFollower(); f != nil {
		unix, tcp = listen.ByKind(f.handOver())
	}
	srv, err := n.cfg.Start(n.fence, unix, tcp)
	if err != nil {
		n.log.Error("elected, but the server cannot start; handing leadership over", "error", err)
		for _, l := range []net.Listener{unix, tcp} {
			if l != nil {
				l.Close()
			}
		}
		n.raft.LeadershipTransfer()
		if err := n.startFollowing(nil, nil); err != nil {
			n.cfg.Fatal(err)
		}
		return
	}
	n.mu.Lock()
	n.srv = srv
	n.mu.Unlock()
	n.log.Info("leader: serving", "term", n.raft.CurrentTerm(), "took", time.Since(start))
}

// stopServing stops the leader's server; keep leaves its listeners open
// and returns them.
func (n *Node) stopServing(keep bool) (unix, tcp net.Listener) {
	n.mu.Lock()
	srv := n.srv
	n.srv = nil
	n.mu.Unlock()
	if srv == nil {
		return nil, nil
	}
	var err error
	if keep {
		unix, tcp, err = srv.CloseKeepingListeners()
	} else {
		err = srv.Close()
	}
	if err != nil {
		n.log.Error("stop the server", "error", err)
	}
	return unix, tcp
}

// Close stops serving and leaves raft (the group goes on without this
// member until it returns).
func (n *Node) Close() error {
	close(n.stop)
	<-n.done
	n.stopServing(false)
	n.stopFollowing()
	err := n.raft.Shutdown().Error()
	n.closeRaftState()
	return err
}

// fsm applies the group's entries to this member's store.
type fsm struct {
	st    *store.Store
	fatal func(error)
}

func (f *fsm) Apply(l *raft.Log) any {
	if err := f.st.ApplyEntry(l.Index, l.Data); err != nil {
		if errors.Is(err, store.ErrMalformedEntry) {
			// No restart can apply it: this member stops, and
			// checkLog keeps it out of the group when restarted
			// (it would otherwise campaign with the entry in its
			// log and hand it to every member).
			f.fatal(fmt.Errorf("entry %d (term %d) cannot be decoded by this member: %w; it stops and will not rejoin the group with it: if the other members serve, rebuild this one (pbs_server -ha-rebuild), else run the version that wrote it", l.Index, l.Term, err))
			return err
		}
		// This member's store would now miss a committed change:
		// it stops, and replays the entry when it restarts.
		f.fatal(fmt.Errorf("apply entry %d: %w; a restart replays it", l.Index, err))
		return err
	}
	return nil
}

// checkLog refuses a raft log holding, after the entries the store
// applied, one the store cannot decode: a member that started with it
// could win an election (its last term is the highest) and commit it
// everywhere, stopping every member.
func checkLog(logs raft.LogStore, applied uint64) error {
	first, err := logs.FirstIndex()
	if err != nil {
		return err
	}
	last, err := logs.LastIndex()
	if err != nil {
		return err
	}
	for i := max(first, applied+1); i <= last && i > 0; i++ {
		var l raft.Log
		if err := logs.GetLog(i, &l); err != nil {
			if errors.Is(err, raft.ErrLogNotFound) {
				continue
			}
			return fmt.Errorf("raft log entry %d: %w", i, err)
		}
		if l.Type != raft.LogCommand {
			continue
		}
		if err := store.CheckEntry(l.Data); err != nil {
			return fmt.Errorf("raft log entry %d (term %d) cannot be decoded: %w; this member does not rejoin the group with it: if the other members serve, rebuild this one (pbs_server -ha-rebuild), else run the version that wrote it", i, l.Term, err)
		}
	}
	return nil
}

func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	c, err := f.st.CopyNow()
	if err != nil {
		return nil, err
	}
	return &snapshot{c: c}, nil
}

func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return f.st.Replace(rc)
}

// snapshot is a copy of the store file (bbolt's Tx.WriteTo).
type snapshot struct{ c *store.Copy }

func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.c.WriteTo(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *snapshot) Release() { s.c.Close() }
