package relay

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/proto"
)

// Upstream is an authenticated connection to the server (or the leader
// of its group) that a relay forwards one command's requests over.
type Upstream struct {
	Conn       *proto.Conn
	ServerName string // the server's short name, for the command's Hello
	Close      func() error
}

// Relay forwards local command connections to the server.
type Relay struct {
	// Dial opens a connection to the server. The relay dials when the
	// first request arrives, so an idle local connection costs the
	// server nothing.
	Dial func() (Upstream, error)
	// ServerName is the server's name when the daemon knows it already
	// ("" makes the relay dial before answering the command's Hello,
	// whose reply needs it).
	ServerName func() string
	// Host is the host name the identities carry.
	Host string
	// Local, when set, serves a request meant for this daemon rather
	// than the server (a mom's task spawn); it reports whether it took
	// the request, and the connection is then its own.
	Local func(down *proto.Conn, peer listen.Peer, h proto.Header, body msgpack.RawMessage) bool
	// Handshake bounds the command's Hello.
	Handshake time.Duration
	// Unreachable describes the server for a command's error when it
	// cannot be reached ("the mom cannot reach the server at host:15001").
	Unreachable string
	Log         hclog.Logger
}

// Idle is how long a local connection may sit without a request.
const Idle = 10 * time.Minute

// forwardTimeout bounds one request's round trip through the relay.
const forwardTimeout = 5 * time.Minute

// Serve relays nc, a command's connection whose peer the kernel named,
// until either side ends it.
func (r *Relay) Serve(nc net.Conn, peer listen.Peer, slot *connlimit.Slot) {
	var up Upstream
	defer func() {
		if up.Close != nil {
			up.Close()
		}
	}()
	serverName := r.ServerName()
	var dialErr error
	if serverName == "" {
		// The command's Hello is answered all the same: its first
		// request then hears why the server cannot be reached.
		if up, dialErr = r.Dial(); dialErr == nil {
			serverName = up.ServerName
		}
	}
	down := proto.NewConn(nc, 0)
	// Dialing the server may have taken longer than the handshake's
	// bound (the accept loop's deadline): it counts from now.
	nc.SetDeadline(time.Now().Add(r.Handshake))
	if _, err := proto.ServerHandshake(down, serverName, func(hi proto.Hello) ([]byte, error) {
		if hi.Role != proto.RoleClient {
			return nil, fmt.Errorf("only commands use this socket")
		}
		return nil, nil
	}); err != nil {
		return
	}
	nc.SetDeadline(time.Time{})
	// A command that stops reading is cut off: it holds up the server's
	// answer behind the relay (which reads no more of it meanwhile).
	down.SetWriteTimeout(proto.WriteTimeout)
	slot.Established()
	who := asuser.Identity(peer.UID, peer.GID, r.Host)
	for {
		nc.SetReadDeadline(time.Now().Add(Idle))
		h, body, err := down.Recv()
		if err != nil {
			return
		}
		if r.Local != nil && r.Local(down, peer, h, body) {
			return
		}
		if up.Conn == nil {
			if dialErr == nil {
				up, dialErr = r.Dial()
			}
			if dialErr != nil {
				code := proto.PBSE_SYSTEM
				if pe := (*proto.Error)(nil); errors.As(dialErr, &pe) && pe.Code == proto.PBSE_BADCRED {
					code = pe.Code
				}
				pe := proto.Errorf(code, "%s: %v", r.Unreachable, dialErr)
				down.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: pe.Code, Text: pe.Error()}, nil)
				return
			}
		}
		// Whatever the command claimed, it is the kernel's uid.
		h.As = who
		if err := proto.Forward(up.Conn, down, h, body, forwardTimeout); err != nil {
			var slow *proto.SlowReaderError
			if errors.As(err, &slow) {
				r.Log.Warn("forwarding: connection cut off", "uid", peer.UID, "reason", err)
			}
			return
		}
	}
}

// DialServer opens an authenticated connection as o describes it to the
// server at o.Address or, when group names a replicated group's members,
// to whichever of them leads.
func DialServer(o proto.DialOptions, group []string) (Upstream, error) {
	c, err := proto.DialGroup(o, group)
	if err != nil {
		return Upstream{}, err
	}
	return Upstream{Conn: c.Conn(), ServerName: c.ServerName(), Close: c.Close}, nil
}
