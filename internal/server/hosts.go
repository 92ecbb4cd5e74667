package server

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/stage"
	"github.com/gopbs/gopbs/proto"
)

// Staging lists name hosts as users write them ($(hostname), an FQDN, an
// address), not necessarily as their nodes were registered (localhost, a
// short name). The server matches a host to a node's mom by name (the
// node, its Mom attribute, or a name the mom reports for its own host)
// and by address (the host is, or resolves to, an address the mom
// reports). Names are resolved before the server's lock is taken
// (resolveStageHosts); the checks under the lock read what was resolved.

// resolveTTL is how long a resolved host is kept; resolveTimeout bounds
// one lookup, so a broken resolver delays a qsub by at most that.
const (
	resolveTTL     = 5 * time.Minute
	resolveTimeout = 2 * time.Second
)

// hostResolver keeps the addresses of the hosts staging lists named. Its
// own mutex guards it: it is read under the server's lock and filled
// outside it.
type hostResolver struct {
	mu sync.Mutex
	m  map[string]resolvedHost
}

type resolvedHost struct {
	addrs []string
	at    time.Time
}

// resolve looks up the hosts not resolved within resolveTTL of now.
func (r *hostResolver) resolve(hosts []string, now time.Time) {
	for _, h := range hosts {
		if net.ParseIP(h) != nil {
			continue
		}
		r.mu.Lock()
		e, ok := r.m[h]
		r.mu.Unlock()
		if ok && now.Sub(e.at) < resolveTTL {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
		addrs, _ := net.DefaultResolver.LookupHost(ctx, h)
		cancel()
		r.mu.Lock()
		if r.m == nil {
			r.m = map[string]resolvedHost{}
		}
		r.m[h] = resolvedHost{addrs: addrs, at: now}
		r.mu.Unlock()
	}
}

// addrs are host's addresses: itself when it is one, else what resolve
// found (nothing when it was not resolved).
func (r *hostResolver) addrs(host string) []string {
	if net.ParseIP(host) != nil {
		return []string{host}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[host].addrs
}

// resolveStageHosts resolves the hosts of staging lists (no lock held;
// lists that do not parse are left to the checks that refuse them).
func (s *Server) resolveStageHosts(lists ...string) {
	var hosts []string
	for _, l := range lists {
		if l == "" {
			continue
		}
		pairs, err := stage.ParseList(l)
		if err != nil {
			continue
		}
		for _, p := range pairs {
			hosts = append(hosts, p.Host)
		}
	}
	if len(hosts) > 0 {
		s.hosts.resolve(hosts, s.now())
	}
}

// momOnHost reports whether node name's mom runs on host (mu held).
func (s *Server) momOnHost(name string, n *model.Object, host string) bool {
	if host == name {
		return true
	}
	if mom, _ := n.Get(proto.AttrNodeMom); mom != "" && sameHost(host, mom) {
		return true
	}
	rt := s.nodes.Runtime(name)
	if rt == nil || !rt.Reported {
		return false
	}
	for _, own := range rt.Status.HostNames {
		if sameHost(host, own) {
			return true
		}
	}
	for _, a := range s.hosts.addrs(host) {
		for _, own := range rt.Status.HostAddrs {
			if a == own && !net.ParseIP(a).IsLoopback() {
				return true
			}
		}
	}
	return false
}
