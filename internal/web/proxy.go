package web

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/proto"
)

// The trusted proxy. Its header names any user, so the proof that a
// connection is the proxy's must be one no other user can forge: an
// address on another host (any local user can connect from each of this
// host's own addresses, loopback's whole 127.0.0.0/8 among them), or, for
// a proxy on this host, the uid the kernel gives for the peer of a Unix
// socket (SO_PEERCRED).

// loopbackRanges are the prefixes every local user can connect from
// whatever the interfaces: IPv4 and IPv6 loopback, and IPv4 loopback as
// IPv6 sees it mapped.
func loopbackRanges() [3]netip.Prefix {
	return [...]netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("::ffff:127.0.0.0/104"),
	}
}

// CheckProxyAddrs refuses proxy addresses (PBS_WEB_PROXY_ADDR) that take
// in a loopback address or one of own (this host's addresses): a header
// trusted from there is one any local user can send.
func CheckProxyAddrs(addrs []netip.Prefix, own []netip.Addr) error {
	const why = "any local user can connect from it and name any user in the proxy's header; a proxy on this host connects to the socket PBS_HOME/" + config.WebSocketName + " as " + config.KeyWebProxyUID + " instead"
	for _, p := range addrs {
		for _, lo := range loopbackRanges() {
			if p.Overlaps(lo) {
				return fmt.Errorf("%s: %s takes in loopback addresses (%s): %s", config.KeyWebProxyAddr, p, lo, why)
			}
		}
		for _, a := range own {
			for _, form := range []netip.Addr{a.Unmap().WithZone(""), netip.AddrFrom16(a.Unmap().As16())} {
				if p.Contains(form) {
					return fmt.Errorf("%s: %s takes in %s, an address of this host: %s", config.KeyWebProxyAddr, p, a, why)
				}
			}
		}
	}
	return nil
}

// listenProxySocket opens the socket of a proxy on this host at path:
// owned by uid and mode 0600, so that only the proxy's user (and root)
// can connect; each connection's peer uid is checked anyway, so a wider
// mode set later lets no one else in.
func listenProxySocket(path string, uid uint32, log hclog.Logger) (net.Listener, error) {
	os.Remove(path) // a stale socket of an earlier run
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s for %s: %w", path, config.KeyWebProxyUID, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := os.Chown(path, int(uid), -1); err != nil {
		l.Close()
		return nil, fmt.Errorf("chown %s to %s=%d: %w", path, config.KeyWebProxyUID, uid, err)
	}
	return &proxyListener{Listener: l, uid: uid, log: log}, nil
}

// proxyListener tells, for each connection, whether its peer is the
// proxy's uid (the kernel's word); identify refuses requests from any
// other uid on this socket.
type proxyListener struct {
	net.Listener
	uid uint32
	log hclog.Logger
}

func (l *proxyListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	uid, _, err := proto.PeerCreds(nc)
	if err != nil {
		l.log.Warn("cannot read the peer credentials of a connection on the proxy's socket", "error", err)
	}
	return socketConn{Conn: nc, proxy: err == nil && uid == l.uid}, nil
}

// socketConn is a connection on the proxy's socket: proxy is whether its
// peer is the proxy's uid.
type socketConn struct {
	net.Conn
	proxy bool
}

type socketKey struct{}

// connContext lets handlers find their connection (connlimit) and know
// whether it came on the proxy's socket, and from the proxy's uid.
func connContext(ctx context.Context, c net.Conn) context.Context {
	ctx = connlimit.ConnContext(ctx, c)
	if ac, ok := c.(*connlimit.Conn); ok {
		if sc, ok := ac.Conn.(socketConn); ok {
			ctx = context.WithValue(ctx, socketKey{}, sc)
		}
	}
	return ctx
}

// onProxySocket reports whether ctx's request came on the proxy's
// socket, and whether its peer is the proxy's uid.
func onProxySocket(ctx context.Context) (onSocket, proxy bool) {
	sc, ok := ctx.Value(socketKey{}).(socketConn)
	return ok, ok && sc.proxy
}
