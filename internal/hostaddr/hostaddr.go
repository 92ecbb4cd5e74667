// Package hostaddr knows this host's own IP addresses. Any local user can
// open a TCP connection from any of them (loopback's whole 127.0.0.0/8,
// ::1, and every address of the host's interfaces), so a peer at one of
// them is "someone on this host", never a particular machine: it cannot
// stand for a reverse proxy, and it gets no budget share of its own.
//
// Who calls: the web listener (internal/web) checks PBS_WEB_PROXY_ADDR
// against Read at start and tells peers apart with a Cache; the metrics
// and web listeners' budgets (internal/connlimit) count all local peers
// as one.
package hostaddr

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// TTL is how long a Cache trusts the addresses it read: an address added
// to an interface (a VPN, DHCP) counts as this host's within TTL.
const TTL = 10 * time.Second

// Read returns the addresses of this host's interfaces, IPv4 ones
// unmapped.
func Read() ([]netip.Addr, error) {
	ifas, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("reading this host's interface addresses: %w", err)
	}
	out := make([]netip.Addr, 0, len(ifas))
	for _, ifa := range ifas {
		var ip net.IP
		switch a := ifa.(type) {
		case *net.IPNet:
			ip = a.IP
		case *net.IPAddr:
			ip = a.IP
		}
		if a, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, a.Unmap().WithZone(""))
		}
	}
	return out, nil
}

// Local reports whether a is an address any user of this host can
// connect from: a loopback address or one of own (this host's, Read).
// An IPv4-mapped IPv6 address counts as its IPv4 address.
func Local(a netip.Addr, own []netip.Addr) bool {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return false
	}
	if a.IsLoopback() {
		return true
	}
	for _, o := range own {
		if o.Unmap().WithZone("") == a {
			return true
		}
	}
	return false
}

// Cache holds this host's addresses, read again once they are TTL old.
// The zero value reads the interfaces; safe for concurrent use.
type Cache struct {
	// ReadAddrs reads the addresses (nil: Read); tests give their own.
	ReadAddrs func() ([]netip.Addr, error)

	mu    sync.Mutex
	at    time.Time
	addrs []netip.Addr
}

// Addrs returns the host's addresses as last read. A failed read keeps
// the previous ones (loopback is recognised without them).
func (c *Cache) Addrs() []netip.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.at.IsZero() || now.Sub(c.at) >= TTL {
		read := c.ReadAddrs
		if read == nil {
			read = Read
		}
		if addrs, err := read(); err == nil {
			c.addrs = addrs
		}
		c.at = now
	}
	return c.addrs
}

// Local is Local(a, c.Addrs()).
func (c *Cache) Local(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() {
		return true // no read needed
	}
	return Local(a, c.Addrs())
}
