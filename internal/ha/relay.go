package ha

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/proto"
)

// handshakeTimeout bounds a peer's Hello on a follower's listeners.
const handshakeTimeout = 3 * time.Second

// follower is what a member that does not lead serves: its batch port
// names the leader to daemons, its Unix socket relays local commands.
type follower struct {
	listeners []net.Listener
	stop      chan struct{}
	wg        sync.WaitGroup
}

// startFollowing serves as a follower on unix and tcp, the listeners a
// deposed leader's server handed back (nil: new ones are opened).
func (n *Node) startFollowing(unix, tcp net.Listener) error {
	f := &follower{stop: make(chan struct{})}
	local := connlimit.New("local", connlimit.Budget{}, n.log.Named("conn"))
	remote := connlimit.New("remote", connlimit.Budget{}, n.log.Named("conn"))
	if unix == nil && n.cfg.SocketPath != "" {
		l, err := listen.Unix(n.cfg.SocketPath)
		if err != nil {
			if tcp != nil {
				tcp.Close()
			}
			return err
		}
		unix = l
	}
	if unix != nil {
		f.serve(unix, local, n, n.relay)
	}
	if tcp == nil && n.cfg.TCPAddr != "" {
		l, err := net.Listen("tcp", n.cfg.TCPAddr)
		if err != nil {
			f.close()
			return fmt.Errorf("listen on %s: %w", n.cfg.TCPAddr, err)
		}
		tcp = l
	}
	if tcp != nil {
		f.serve(tcp, remote, n, n.redirect)
	}
	n.mu.Lock()
	n.follow = f
	n.mu.Unlock()
	return nil
}

func (f *follower) serve(l net.Listener, limit *connlimit.Limiter, n *Node, serve func(net.Conn, listen.Peer)) {
	f.listeners = append(f.listeners, l)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		// Connections are not waited for, nor cut, when the member
		// stops following: a relayed command goes on talking to the
		// leader, which may now be this member's own server.
		loop := &listen.Loop{Listener: l, Limit: limit, Handshake: handshakeTimeout, Stop: f.stop, Log: n.log,
			Serve: func(nc net.Conn, peer listen.Peer, slot *connlimit.Slot) {
				defer nc.Close()
				slot.Established()
				serve(nc, peer)
			}}
		loop.Run()
	}()
}

func (f *follower) close() {
	for _, l := range f.handOver() {
		l.Close()
	}
}

// handOver stops accepting and returns the listeners, still open: what
// connects meanwhile waits in the kernel's queue for the next owner.
func (f *follower) handOver() []net.Listener {
	close(f.stop)
	for _, l := range f.listeners {
		listen.Interrupt(l) // the loop sees stop
	}
	f.wg.Wait()
	for _, l := range f.listeners {
		listen.Resume(l)
	}
	return f.listeners
}

func (n *Node) stopFollowing() {
	if f := n.takeFollower(); f != nil {
		f.close()
	}
}

func (n *Node) takeFollower() *follower {
	n.mu.Lock()
	defer n.mu.Unlock()
	f := n.follow
	n.follow = nil
	return f
}

// keyFor is the batch port's rule (proto.BatchPortKey): daemons with the
// cluster key, login agents with their host's login key.
func (n *Node) keyFor(hi proto.Hello) ([]byte, error) { return proto.BatchPortKey(n.cfg.Key, hi) }

// redirect answers a daemon's Hello with the leader's address.
func (n *Node) redirect(nc net.Conn, _ listen.Peer) {
	proto.ServerRedirect(proto.NewConn(nc, 0), n.cfg.ServerName, n.keyFor, n.Leader())
}

// relay forwards a local command's requests to the leader, each stamped
// with the caller's identity as the kernel reports it (as a mom's relay
// does), so that commands typed on any member's host work.
func (n *Node) relay(nc net.Conn, peer listen.Peer) {
	down := proto.NewConn(nc, 0)
	if _, err := proto.ServerHandshake(down, n.cfg.ServerName, func(hi proto.Hello) ([]byte, error) {
		if hi.Role != proto.RoleClient {
			return nil, fmt.Errorf("daemons must connect over TCP with the cluster key")
		}
		return nil, nil
	}); err != nil {
		return
	}
	nc.SetDeadline(time.Time{})
	down.SetWriteTimeout(proto.WriteTimeout)
	who := asuser.Identity(peer.UID, peer.GID, config.ShortHostname())
	var up *proto.Client
	defer func() {
		if up != nil {
			up.Close()
		}
	}()
	for {
		nc.SetReadDeadline(time.Now().Add(10 * time.Minute))
		h, body, err := down.Recv()
		if err != nil {
			return
		}
		if up == nil {
			if up, err = n.dialLeader(); err != nil {
				pe, ok := err.(*proto.Error)
				if !ok {
					pe = proto.Errorf(proto.PBSE_SYSTEM, "%v", err)
				}
				down.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: pe.Code, Text: pe.Error()}, nil)
				return
			}
			// A leader that stops answering (a hung host, cut off) is
			// replaced within seconds: then its connection is cut, so
			// the command hears of it at once rather than at its own
			// timeout.
			stop := make(chan struct{})
			defer close(stop)
			go n.cutWhenDeposed(up, stop)
		}
		h.As = who
		if err := proto.Forward(up.Conn(), down, h, body, 5*time.Minute); err != nil {
			pe := proto.Errorf(proto.PBSE_SYSTEM, "the group's leader did not answer (%v): the request may or may not have been carried out", err)
			down.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: pe.Code, Text: pe.Error()}, nil)
			return
		}
	}
}

// cutWhenDeposed closes up, a connection to the leader, once the group
// names another leader, until stop is closed.
func (n *Node) cutWhenDeposed(up *proto.Client, stop <-chan struct{}) {
	leader := up.Conn().NetConn().RemoteAddr().String()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	known := "" // the last leader seen to be the one dialed
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		l := n.Leader()
		if l == "" || l == known {
			continue
		}
		if !sameAddr(l, leader) {
			up.Close()
			return
		}
		known = l
	}
}

// sameAddr compares two host:port addresses, resolving the host names.
func sameAddr(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := net.ResolveTCPAddr("tcp", a)
	rb, err2 := net.ResolveTCPAddr("tcp", b)
	return err1 == nil && err2 == nil && ra.String() == rb.String()
}

// dialLeader connects to the leader as a member of its group (this
// member's own server once it leads). While there is none it waits, but never beyond noQuorumAfter of no leader:
// then the group has no quorum, and the caller hears so at once.
func (n *Node) dialLeader() (*proto.Client, error) {
	for {
		leader := n.Leader()
		if leader != "" {
			c, err := proto.Dial(proto.DialOptions{Network: "tcp", Address: leader, Role: proto.RoleServer, Name: n.cfg.ServerName, Key: n.cfg.Key, Timeout: applyTimeout})
			if err == nil {
				return c, nil
			}
			n.log.Debug("relay: cannot reach the leader", "leader", leader, "error", err)
		}
		n.mu.Lock()
		since := n.leaderless
		n.mu.Unlock()
		if !since.IsZero() && time.Since(since) > noQuorumAfter {
			return nil, proto.NewError(proto.PBSE_NOQUORUM)
		}
		select {
		case <-n.stop:
			return nil, proto.NewError(proto.PBSE_SVRDOWN)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
