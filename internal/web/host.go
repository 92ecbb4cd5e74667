package web

import (
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"

	"github.com/gopbs/gopbs/internal/config"
)

// DNS rebinding: a page from elsewhere, open in a browser on this host
// (or on the proxy's network), has its own name re-pointed at this
// listener's address and reads the anonymous view as its own origin.
// The browser still sends that name as Host, so the listener answers
// only requests whose Host names it: its address, this host's names and
// addresses, PBS_SERVER, and PBS_WEB_HOSTS. The port is not compared:
// rebinding is a matter of names, and a proxy may send the site's port.

// hostNames are the names a request's Host may carry.
type hostNames struct {
	names map[string]bool
	// ip is the listener's address when it is bound to one.
	ip netip.Addr
}

// newHostNames gathers the names of a listener on addr for a server
// labelled label, with the configured extra ones.
func newHostNames(addr, label string, extra []string) hostNames {
	h := hostNames{names: map[string]bool{"localhost": true}}
	add := func(s string) {
		if a, err := netip.ParseAddr(s); err == nil {
			h.names[a.Unmap().String()] = true
		} else if n, ok := config.HostName(s); ok {
			h.names[n] = true
		}
	}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		add(host)
		if a, err := netip.ParseAddr(host); err == nil && !a.IsUnspecified() {
			h.ip = a.Unmap()
		}
	}
	label, _, _ = strings.Cut(label, ":")
	add(label)
	if hn, err := os.Hostname(); err == nil {
		add(hn)
		add(config.ShortName(hn))
	}
	for _, e := range extra {
		add(e)
	}
	return h
}

// hostOf parses a Host header value (host, host:port, [v6]:port) to the
// host it names, lower case, without a trailing dot, an IPv6 address
// without brackets; false when it is not one.
func hostOf(v string) (string, bool) {
	host, port := v, ""
	if strings.HasPrefix(v, "[") {
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return "", false
		}
		host, port = v[1:end], v[end+1:]
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", false
		}
		host = a.Unmap().String()
		if port != "" && !strings.HasPrefix(port, ":") {
			return "", false
		}
		port = strings.TrimPrefix(port, ":")
	} else {
		if strings.Count(v, ":") > 1 {
			return "", false // an IPv6 address must be bracketed
		}
		host, port, _ = strings.Cut(v, ":")
		if a, err := netip.ParseAddr(host); err == nil {
			host = a.String()
		} else if n, ok := config.HostName(host); ok {
			host = n
		} else {
			return "", false
		}
	}
	if len(port) > 5 {
		return "", false
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", false
		}
	}
	return host, true
}

// hostAllowed reports whether r's Host names this listener: one of its
// names, or an address of this host (an address cannot be rebound).
func (s *Server) hostAllowed(r *http.Request) bool {
	host, ok := hostOf(r.Host)
	if !ok {
		return false
	}
	if s.hosts.names[host] {
		return true
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a == s.hosts.ip || s.hostLocal(a)
	}
	return false
}
