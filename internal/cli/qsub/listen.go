package qsub

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/interactive"
)

// qsub -I's listener. The job's shepherd dials the submission host by
// the name the server knows it by (the job's submit host) and the port
// qsub gave; qsub listens on that port of each address the name has here,
// not on every interface. Until the shepherd proves itself, every
// connection is a stranger's: at most pendingMax are held at once, each
// for handshakeWait, and a newcomer closes the oldest (internal/connlimit),
// so silent connections cost qsub a few descriptors and lose to the
// shepherd, which comes last. An accept that fails (out of descriptors)
// is tried again after a pause: giving up would leave the shepherd
// unanswered for good.

// pendingMax bounds the connections held at once before one proves to be
// the shepherd: the shepherd proves itself in three messages, so a
// newcomer closing the oldest of a few is room enough, and a few
// descriptors are all a flood of silent connections costs.
const pendingMax = 16

// handshakeWait bounds how long an accepted connection has to prove it
// is the job's shepherd (a few round trips, even from afar).
const handshakeWait = 10 * time.Second

// resolveWait bounds looking up the submission host's addresses.
const resolveWait = 10 * time.Second

// listenTries is how many ports qsub tries when the one the kernel gave
// for the first address is taken on another.
const listenTries = 8

// lookupIP gives the addresses of a host name (net.Resolver.LookupIP's
// "ip" network in qsub; tests give their own).
type lookupIP func(ctx context.Context, host string) ([]net.IP, error)

// listenAddrs are the addresses of ips qsub may listen on for the
// shepherd, each once: not the unspecified address (every interface) nor
// a multicast one, nor an IPv6 link-local one (it needs a zone, which a
// name does not give, and the shepherd could not dial it either).
func listenAddrs(ips []net.IP) []net.IP {
	var out []net.IP
	seen := map[string]bool{}
	for _, ip := range ips {
		if ip == nil || ip.IsUnspecified() || ip.IsMulticast() || ip.To4() == nil && ip.IsLinkLocalUnicast() {
			continue
		}
		if k := ip.String(); !seen[k] {
			seen[k] = true
			out = append(out, ip)
		}
	}
	return out
}

// listeners are qsub's listening sockets, one port on each address.
type listeners struct {
	lns  []net.Listener
	port int
}

func (l *listeners) Close() {
	for _, ln := range l.lns {
		ln.Close()
	}
}

// listenOn listens on one port of each of ips that this host has (an
// address it does not have, say a stale DNS entry, is skipped): the
// kernel picks the port on the first, and the others take the same one;
// when one of them has it taken, all start again on another port.
func listenOn(ips []net.IP) (*listeners, error) {
	addrs := listenAddrs(ips)
	if len(addrs) == 0 {
		return nil, errors.New("the host name has no address to listen on")
	}
	var err error
	for try := 0; try < listenTries; try++ {
		var l *listeners
		if l, err = listenOnce(addrs); !errors.Is(err, errPortTaken) {
			return l, err
		}
	}
	return nil, fmt.Errorf("%d tries: %w", listenTries, err)
}

// errPortTaken is a port the kernel gave on one address that another
// address has in use.
var errPortTaken = errors.New("the port is taken on another of the addresses")

func listenOnce(addrs []net.IP) (*listeners, error) {
	l := &listeners{}
	var skipped error
	for _, ip := range addrs {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(l.port)))
		switch {
		case err == nil:
			l.lns = append(l.lns, ln)
			l.port = ln.Addr().(*net.TCPAddr).Port
		case errors.Is(err, syscall.EADDRNOTAVAIL):
			skipped = err
		default:
			l.Close()
			if l.port != 0 && errors.Is(err, syscall.EADDRINUSE) {
				return nil, fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return nil, err
		}
	}
	if len(l.lns) == 0 {
		return nil, fmt.Errorf("none of its addresses is this host's: %w", skipped)
	}
	return l, nil
}

// listenFor listens for the shepherd on the addresses host (the
// submission host as the server names it) has.
func listenFor(host string, lookup lookupIP) (*listeners, error) {
	ctx, cancel := context.WithTimeout(context.Background(), resolveWait)
	defer cancel()
	ips, err := lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("cannot listen for the interactive job: %w", err)
	}
	l, err := listenOn(ips)
	if err != nil {
		names := make([]string, len(ips))
		for i, ip := range ips {
			names[i] = ip.String()
		}
		return nil, fmt.Errorf("cannot listen for the interactive job on %s (%s): %w", host, strings.Join(names, ", "), err)
	}
	return l, nil
}

// acceptBackoff is the pause after the accept that failed after a pause
// of d (0: the first failure): net/http's, 5 ms doubling to 1 s.
func acceptBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return 5 * time.Millisecond
	}
	return min(2*d, time.Second)
}

// newStrangers is the budget of the connections not yet proven.
func newStrangers() *connlimit.Limiter {
	// One budget, whoever connects: the shepherd may come from the
	// address a flood comes from (the same host), so a budget per peer
	// would protect it no better.
	return connlimit.New("interactive", connlimit.Budget{Max: pendingMax + 1, PerPeer: pendingMax + 1, Pending: pendingMax, PerPeerPending: pendingMax}, nil)
}

// acceptShepherd accepts connections on ln until ln is closed, each
// under lim's budget, and hands over the first that proves to be the
// job's shepherd. The handshakes run side by side, so a stranger holding
// a connection open delays no one.
func acceptShepherd(ln net.Listener, lim *connlimit.Limiter, id string, cookie []byte, proven chan<- *interactiveSession) {
	var pause time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return // the wait is over
			}
			// Out of descriptors (EMFILE, ENFILE) or a connection
			// aborted on its way in: pending handshakes end or are
			// closed meanwhile, and the next accept may succeed.
			pause = acceptBackoff(pause)
			time.Sleep(pause)
			continue
		}
		pause = 0
		slot := lim.Admit(connlimit.PeerKey(nc), nc)
		if slot == nil {
			continue // closed by Admit
		}
		go proveShepherd(nc, slot, id, cookie, proven)
	}
}

// proveShepherd runs the handshake on nc and hands nc over when its peer
// is the job's shepherd; else it closes nc.
func proveShepherd(nc net.Conn, slot *connlimit.Slot, id string, cookie []byte, proven chan<- *interactiveSession) {
	defer slot.Release()
	nc.SetDeadline(time.Now().Add(handshakeWait))
	fc := interactive.NewConn(nc)
	if err := fc.Accept(id, cookie, rand.Reader); err != nil {
		nc.Close()
		return
	}
	slot.Established()
	if !slot.IsEstablished() {
		// A newcomer closed it as it proved itself: the shepherd
		// finds its connection gone and the job ends, as with any
		// lost connection.
		nc.Close()
		return
	}
	nc.SetDeadline(time.Time{})
	select {
	case proven <- &interactiveSession{nc: nc, fc: fc}:
	default:
		nc.Close() // another one was first
	}
}
