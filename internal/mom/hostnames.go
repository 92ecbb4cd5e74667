package mom

import (
	"context"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

// ownHost is what the mom knows of its own host's names and addresses,
// reported to the server so that staging lists may name the host as
// users write it ($(hostname), the FQDN, an address) whatever name the
// node was registered under.
type ownHost struct {
	names []string
	addrs []string
}

// lookupTimeout bounds each name lookup at start: a broken resolver
// delays the mom by at most this, and the names found locally stay.
const lookupTimeout = 2 * time.Second

// findOwnHost gathers the host name, the canonical name it resolves to,
// the addresses it resolves to and those of the host's interfaces.
func findOwnHost() ownHost {
	var h ownHost
	add := func(list *[]string, v string) {
		v = strings.TrimSuffix(v, ".")
		if v != "" && !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	name, err := os.Hostname()
	if err == nil {
		add(&h.names, name)
		ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
		if cname, err := net.DefaultResolver.LookupCNAME(ctx, name); err == nil {
			add(&h.names, cname)
		}
		if addrs, err := net.DefaultResolver.LookupHost(ctx, name); err == nil {
			for _, a := range addrs {
				add(&h.addrs, a)
			}
		}
		cancel()
	}
	if ifaddrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range ifaddrs {
			if ipn, ok := a.(*net.IPNet); ok {
				add(&h.addrs, ipn.IP.String())
			}
		}
	}
	return h
}
