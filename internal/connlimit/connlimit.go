package connlimit

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Budget is the admission policy of one class of peers. Zero fields take
// the defaults of DefaultBudget.
type Budget struct {
	Max            int // connections at once
	PerPeer        int // connections at once from one peer
	Pending        int // connections at once not yet established
	PerPeerPending int // of those, from one peer
}

// DefaultBudget suits a daemon's local socket or TCP port: a few thousand
// connections, a few hundred of them in their handshake.
var DefaultBudget = Budget{Max: 4096, PerPeer: 1024, Pending: 256, PerPeerPending: 32}

// LogEvery is how often refusals are logged at most.
const LogEvery = 10 * time.Second

// Limiter admits connections of one class. The zero value is not usable;
// call New.
type Limiter struct {
	name string
	b    Budget
	log  hclog.Logger

	mu      sync.Mutex
	total   int
	pending map[*Slot]struct{}
	peers   map[string]*peer
	seq     uint64
	// whole are the peers bounded by the class's bounds only (TrustPeer).
	whole map[string]bool

	refused    int // since the last log line
	lastLogged time.Time
	// refusedTotal and evictedTotal count, since New, the newcomers
	// refused and the pending connections closed to make room (Stats).
	refusedTotal, evictedTotal uint64
}

type peer struct{ total, pending int }

// Slot is an admitted connection's place in its Limiter.
type Slot struct {
	l           *Limiter
	peer        string
	nc          net.Conn
	order       uint64 // admission order: smaller is older
	established bool
	released    bool
}

// New returns a Limiter for the class name ("local", "remote": it appears
// in log lines).
func New(name string, b Budget, log hclog.Logger) *Limiter {
	d := DefaultBudget
	if b.Max <= 0 {
		b.Max = d.Max
	}
	if b.PerPeer <= 0 {
		b.PerPeer = min(d.PerPeer, b.Max)
	}
	if b.Pending <= 0 {
		b.Pending = min(d.Pending, b.Max)
	}
	if b.PerPeerPending <= 0 {
		b.PerPeerPending = min(d.PerPeerPending, b.Pending, b.PerPeer)
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Limiter{name: name, b: b, log: log, pending: map[*Slot]struct{}{}, peers: map[string]*peer{}, whole: map[string]bool{}}
}

// TrustPeer bounds the peer key by the class's bounds alone, not the
// per-peer ones: for a peer that carries many others' connections (the
// web listener's reverse proxy), whose users are bounded elsewhere.
func (l *Limiter) TrustPeer(key string) {
	l.mu.Lock()
	l.whole[key] = true
	l.mu.Unlock()
}

// Admit takes a slot for nc from peer (a uid or an IP address), closing
// the oldest pending connection of the peer or of the class when their
// pending bounds are reached. It returns nil, after closing nc, when the
// class or the peer has no room: the caller just goes on accepting.
func (l *Limiter) Admit(peerKey string, nc net.Conn) *Slot {
	l.mu.Lock()
	p := l.peers[peerKey]
	if p == nil {
		p = &peer{}
		l.peers[peerKey] = p
	}
	perPeer, perPeerPending := l.b.PerPeer, l.b.PerPeerPending
	if l.whole[peerKey] {
		perPeer, perPeerPending = l.b.Max, l.b.Pending
	}
	var why string
	switch {
	case p.total >= perPeer && p.pending == 0:
		why = fmt.Sprintf("%d connections from this peer", p.total)
	case l.total >= l.b.Max && len(l.pending) == 0:
		why = fmt.Sprintf("%d connections", l.total)
	}
	if why != "" {
		if p.total == 0 {
			delete(l.peers, peerKey)
		}
		l.refusedTotal++
		logNow, suppressed := l.noteRefusal()
		l.mu.Unlock()
		nc.Close()
		if logNow {
			l.log.Warn("connection refused: budget full", "class", l.name, "peer", peerKey, "reason", why, "refused_since_last_log", suppressed)
		}
		return nil
	}
	var victims []*Slot
	// Make room by closing the oldest pending connections: first of this
	// peer (its own budget), then of the class. The counts drop at once;
	// the victims' goroutines see their connections closed.
	if p.total >= perPeer || p.pending >= perPeerPending {
		victims = append(victims, l.evictLocked(peerKey))
	}
	if l.total >= l.b.Max || len(l.pending) >= l.b.Pending {
		if v := l.evictLocked(""); v != nil {
			victims = append(victims, v)
		}
	}
	if p = l.peers[peerKey]; p == nil { // an eviction may have dropped it
		p = &peer{}
		l.peers[peerKey] = p
	}
	l.seq++
	s := &Slot{l: l, peer: peerKey, nc: nc, order: l.seq}
	l.total++
	p.total++
	p.pending++
	l.pending[s] = struct{}{}
	l.mu.Unlock()
	for _, v := range victims {
		v.nc.Close()
	}
	return s
}

// evictLocked takes the oldest pending slot of peerKey ("" for any peer)
// out of the counts and returns it; its connection is closed by the caller
// and its Release is then a no-op.
func (l *Limiter) evictLocked(peerKey string) *Slot {
	var oldest *Slot
	for s := range l.pending {
		if (peerKey == "" || s.peer == peerKey) && (oldest == nil || s.order < oldest.order) {
			oldest = s
		}
	}
	if oldest != nil {
		l.releaseLocked(oldest)
		l.evictedTotal++
		logNow, suppressed := l.noteRefusal()
		if logNow {
			l.log.Warn("pending connection closed to make room", "class", l.name, "peer", oldest.peer, "refused_since_last_log", suppressed)
		}
	}
	return oldest
}

// noteRefusal counts a refusal and says whether to log it now, with the
// number of refusals since the last line (mu held).
func (l *Limiter) noteRefusal() (bool, int) {
	l.refused++
	now := time.Now()
	if now.Sub(l.lastLogged) < LogEvery {
		return false, 0
	}
	n := l.refused
	l.refused, l.lastLogged = 0, now
	return true, n
}

// Established marks the connection as proven: it no longer counts as
// pending and can no longer be closed to make room.
func (s *Slot) Established() {
	if s == nil {
		return
	}
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.released || s.established {
		return
	}
	s.established = true
	delete(l.pending, s)
	l.peers[s.peer].pending--
}

// IsEstablished reports whether Established was called.
func (s *Slot) IsEstablished() bool {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	return s.established
}

// Release gives the slot back. It is safe to call more than once.
func (s *Slot) Release() {
	if s == nil {
		return
	}
	s.l.mu.Lock()
	s.l.releaseLocked(s)
	s.l.mu.Unlock()
}

func (l *Limiter) releaseLocked(s *Slot) {
	if s.released {
		return
	}
	s.released = true
	p := l.peers[s.peer]
	if !s.established {
		delete(l.pending, s)
		p.pending--
	}
	p.total--
	l.total--
	if p.total == 0 {
		delete(l.peers, s.peer)
	}
}

// Counts reports the connections held and pending (for tests and status).
func (l *Limiter) Counts() (total, pending int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, len(l.pending)
}

// Stats is a Limiter's state for monitoring.
type Stats struct {
	Class   string // the name given to New
	Held    int    // connections held now
	Pending int    // of those, not yet established
	// Refused counts the connections refused for want of room, Evicted
	// the pending ones closed to make room for newcomers, since New.
	Refused, Evicted uint64
}

// Stats reports the class's connections and refusals (for metrics).
func (l *Limiter) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{Class: l.name, Held: l.total, Pending: len(l.pending), Refused: l.refusedTotal, Evicted: l.evictedTotal}
}

// UIDKey names a Unix-socket peer for budgets by the uid the kernel gave.
func UIDKey(uid uint32) string { return "uid:" + strconv.FormatUint(uint64(uid), 10) }

// PeerKey names the peer of nc for budgets: the IP address of a TCP peer,
// or "local" (Unix-socket peers are named by UIDKey).
func PeerKey(nc net.Conn) string {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return "local"
}

// HostPeer is the one peer every connection from this host counts as in
// the HTTP listeners' budgets (HostKey).
const HostPeer = "this-host"

// HostKey names the peer of nc for the HTTP listeners' budgets: HostPeer
// for a peer at an address of this host (local says which: loopback's
// whole 127.0.0.0/8, ::1 and the interfaces' addresses, all of which any
// local user can connect from, so counting them apart would give one
// user a share per address), the IP address of any other TCP peer, and
// "local" for anything else.
func HostKey(nc net.Conn, local func(netip.Addr) bool) string {
	a, ok := nc.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return "local"
	}
	return AddrKey(a.AddrPort().Addr(), local)
}

// AddrKey is HostKey for the address a.
func AddrKey(a netip.Addr, local func(netip.Addr) bool) string {
	a = a.Unmap()
	if a.IsLoopback() || local != nil && local(a) {
		return HostPeer
	}
	return a.String()
}
