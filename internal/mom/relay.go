// The relay: commands typed on this host reach the server through the
// mom's Unix socket, each request stamped with the caller's identity as
// the kernel reports it. Each local connection is relayed on its own
// goroutine (acceptLoop), with a server connection of its own.

package mom

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/proto"
)

// relay forwards one local command connection to the server, stamping
// every request with the caller's identity as the kernel reports it. The
// server connection is opened when the first request arrives, so an idle
// local connection costs the server nothing.
func (m *Mom) relay(nc net.Conn, peer listen.Peer, slot *connlimit.Slot) {
	m.mu.Lock()
	serverName := m.serverName
	m.mu.Unlock()
	var up *proto.Conn
	var srv net.Conn
	defer func() {
		if srv != nil {
			srv.Close()
		}
	}()
	dial := func() (proto.HelloReply, error) {
		if len(m.cfg.ServerAddrs) > 0 {
			// A replicated group: whichever member leads.
			c, err := proto.DialGroup(proto.DialOptions{Network: "tcp", Role: proto.RoleMom, Name: m.cfg.NodeName, Key: m.key, Timeout: 30 * time.Second}, m.cfg.ServerAddrs)
			if err != nil {
				m.log.Warn("forwarding: no server of the group answers", "error", err)
				return proto.HelloReply{}, err
			}
			up, srv = c.Conn(), c.Conn().NetConn()
			return proto.HelloReply{ServerName: c.ServerName()}, nil
		}
		var err error
		if srv, err = net.DialTimeout("tcp", m.cfg.ServerAddr, 30*time.Second); err != nil {
			return proto.HelloReply{}, err
		}
		up = proto.NewConn(srv, 0)
		srv.SetDeadline(time.Now().Add(30 * time.Second))
		hello, err := proto.ClientHandshake(up, proto.RoleMom, m.cfg.NodeName, m.key)
		if err != nil {
			m.log.Warn("forwarding: server handshake failed", "error", err)
			return hello, err
		}
		srv.SetDeadline(time.Time{})
		return hello, nil
	}
	if serverName == "" {
		// Not yet connected to the server: the reply needs its name.
		hello, err := dial()
		if err != nil {
			return
		}
		serverName = hello.ServerName
	}
	down := proto.NewConn(nc, 0)
	// Dialing the server may have taken longer than the handshake's
	// bound (the Loop's deadline): it counts from now.
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	if _, err := proto.ServerHandshake(down, serverName, func(r proto.Role) ([]byte, error) {
		if r != proto.RoleClient {
			return nil, fmt.Errorf("only commands use this socket")
		}
		return nil, nil
	}); err != nil {
		return
	}
	nc.SetDeadline(time.Time{})
	// A command that stops reading is cut off: it holds up the server's
	// answer behind the mom (which reads no more of it meanwhile).
	down.SetWriteTimeout(proto.WriteTimeout)
	slot.Established()
	who := identity(peer.UID, peer.GID)
	for {
		nc.SetReadDeadline(time.Now().Add(10 * time.Minute))
		h, body, err := down.Recv()
		if err != nil {
			return
		}
		if h.Type == proto.MsgTaskSpawn {
			// For this mom, not the server: the connection carries the
			// task's streams from here.
			m.serveLocalTask(down, peer, h, body)
			return
		}
		if up == nil {
			if _, err := dial(); err != nil {
				pe := proto.Errorf(proto.PBSE_SYSTEM, "the mom cannot reach the server at %s: %v", m.cfg.ServerAddr, err)
				down.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: pe.Code, Text: pe.Error()}, nil)
				return
			}
		}
		h.As = who
		if err := proto.Forward(up, down, h, body, 5*time.Minute); err != nil {
			var slow *proto.SlowReaderError
			if errors.As(err, &slow) {
				m.log.Warn("forwarding: connection cut off", "uid", peer.UID, "reason", err)
			}
			return
		}
	}
}

// rawBody passes an already encoded body through unchanged (nil stays nil).
func rawBody(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return rawMessage(b)
}

// identity describes a local caller for the server.
func identity(uid, gid uint32) *proto.Identity {
	return asuser.Identity(uid, gid, config.ShortHostname())
}

// rawMessage is an encoded body sent as is.
type rawMessage = msgpack.RawMessage
