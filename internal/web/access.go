package web

import (
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/webtoken"
)

// refusal is why a request gets no answer but an error: its status and
// the text the client sees.
type refusal struct {
	status int
	text   string
}

// identify says who r is for (access rules in doc.go): a token's user, the
// trusted proxy's user, or anonymous; or why r is refused.
func (s *Server) identify(r *http.Request) (Viewer, *refusal) {
	onSocket, fromProxy := onProxySocket(r.Context())
	if onSocket && !fromProxy {
		// Only the proxy's user (and root) can connect (the socket's
		// mode), and only the proxy's uid is let in.
		return Viewer{}, &refusal{http.StatusForbidden, "this socket is for the proxy (" + config.KeyWebProxyUID + ") only"}
	}
	peer := peerAddr(r)
	fromProxy = fromProxy || s.isProxy(peer)
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, tok, _ := strings.Cut(auth, " ")
		if !strings.EqualFold(scheme, "Bearer") || tok == "" {
			return Viewer{}, &refusal{http.StatusUnauthorized, "Authorization must be \"Bearer <token>\" (tokens: pbs_webtoken)"}
		}
		user, ok := s.tokens.lookup(strings.TrimSpace(tok))
		if !ok {
			return Viewer{}, &refusal{http.StatusUnauthorized, "unknown or revoked token"}
		}
		return Viewer{User: user}, nil
	}
	if s.cfg.ProxyHeader != "" {
		if vals := r.Header.Values(s.cfg.ProxyHeader); len(vals) > 0 {
			if !fromProxy {
				// A header naming a user from anyone but the proxy is an
				// attempt to be someone: refuse, do not ignore.
				return Viewer{}, &refusal{http.StatusForbidden, s.cfg.ProxyHeader + " is trusted only from the configured proxy (" + config.KeyWebProxyAddr + " on another host, or " + config.KeyWebProxyUID + " on the socket " + config.WebSocketName + ")"}
			}
			if len(vals) != 1 || !webtoken.ValidUser(vals[0]) {
				return Viewer{}, &refusal{http.StatusBadRequest, s.cfg.ProxyHeader + " must name one user"}
			}
			return Viewer{User: vals[0]}, nil
		}
	}
	if peer.IsLoopback() || fromProxy {
		return Viewer{}, nil
	}
	return Viewer{}, &refusal{http.StatusForbidden, "anonymous requests are answered on this host only: present a token (pbs_webtoken) or come through the site's proxy"}
}

// peerAddr is the IP address r came from (the zero Addr if unknown).
func peerAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// isProxy reports whether a is the proxy's address. Never one of this
// host's: Start refused those, and one the host took on since is any
// local user's too.
func (s *Server) isProxy(a netip.Addr) bool {
	if !a.IsValid() || len(s.cfg.ProxyAddrs) == 0 || s.hostLocal(a) {
		return false
	}
	for _, p := range s.cfg.ProxyAddrs {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerKey names nc's peer for the connection budget: the proxy (at its
// addresses, or its uid on its socket) as one trusted peer, every local
// user as one (connlimit.HostPeer: they can connect from any of this
// host's addresses, and another uid on the proxy's socket is local too),
// any other host by its address.
func (s *Server) peerKey(nc net.Conn) string {
	if sc, ok := nc.(socketConn); ok {
		if sc.proxy {
			return proxyPeer
		}
		return connlimit.HostPeer
	}
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok && s.isProxy(a.AddrPort().Addr().Unmap()) {
		return proxyPeer
	}
	return connlimit.HostKey(nc, s.hostLocal)
}

// streamKey names v's share of the event streams: a named user's own,
// or, for anonymous viewers, that of the peer r came from.
func streamKey(r *http.Request, v Viewer) string {
	if !v.Anonymous() {
		return "user:" + v.User
	}
	peer := "unknown"
	if c := connlimit.ConnOf(r.Context()); c != nil {
		peer = c.Peer()
	}
	return "anonymous@" + peer
}

// hostLocal reports whether a is an address of this host (loopback
// included).
func (s *Server) hostLocal(a netip.Addr) bool {
	if s.host == nil {
		return a.IsLoopback()
	}
	return s.host.Local(a)
}

// tokenCache holds the tokens file as last read, read again whenever the
// file changes (its inode, owner, mode, size or modification time): pbs_webtoken's
// changes apply at once, without a restart.
type tokenCache struct {
	path string
	log  hclog.Logger

	mu      sync.Mutex
	stamp   fileStamp
	entries []webtoken.Entry
}

type fileStamp struct {
	ino, uid uint64
	size     int64
	mtime    time.Time
	mode     os.FileMode // a chmod changes neither size nor mtime
	ok       bool
}

func (c *tokenCache) lookup(token string) (string, bool) {
	if c.path == "" {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var st fileStamp
	if info, err := os.Stat(c.path); err == nil {
		st = fileStamp{size: info.Size(), mtime: info.ModTime(), mode: info.Mode(), ok: true}
		if sys, ok := info.Sys().(*syscall.Stat_t); ok {
			st.ino, st.uid = sys.Ino, uint64(sys.Uid)
		}
	}
	if st != c.stamp {
		c.stamp = st
		entries, err := webtoken.Load(c.path)
		if err != nil {
			// Refuse every token rather than trust a file others could
			// have written; say so once per change of the file.
			c.log.Error("web tokens not used", "error", err)
		}
		c.entries = entries
	}
	return webtoken.Lookup(c.entries, token)
}
