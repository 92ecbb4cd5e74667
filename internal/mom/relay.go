// The relay: commands typed on this host reach the server through the
// mom's Unix socket, each request stamped with the caller's identity as
// the kernel reports it (internal/relay). Each local connection is
// relayed on its own goroutine (acceptLoop), with a server connection of
// its own.

package mom

import (
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/internal/relay"
	"github.com/gopbs/gopbs/proto"
)

// newRelay is the mom's relay: it speaks to the server as this mom (the
// cluster key), and serves task spawns itself.
func (m *Mom) newRelay() *relay.Relay {
	return &relay.Relay{
		Dial: func() (relay.Upstream, error) {
			up, err := relay.DialServer(proto.DialOptions{Network: "tcp", Address: m.cfg.ServerAddr, Role: proto.RoleMom, Name: m.cfg.NodeName, Key: m.key, Timeout: 30 * time.Second}, m.cfg.ServerAddrs)
			if err != nil {
				m.log.Warn("forwarding: the server cannot be reached", "error", err)
			}
			return up, err
		},
		ServerName: m.serverNameNow,
		Host:       config.ShortHostname(),
		Local: func(down *proto.Conn, peer listen.Peer, h proto.Header, body msgpack.RawMessage) bool {
			if h.Type != proto.MsgTaskSpawn {
				return false
			}
			// For this mom, not the server: the connection carries the
			// task's streams from here.
			m.serveLocalTask(down, peer, h, body)
			return true
		},
		Handshake:   handshakeTimeout,
		Unreachable: "the mom cannot reach the server at " + m.cfg.ServerAddr,
		Log:         m.log,
	}
}

// rawBody passes an already encoded body through unchanged (nil stays nil).
func rawBody(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return rawMessage(b)
}

// rawMessage is an encoded body sent as is.
type rawMessage = msgpack.RawMessage
