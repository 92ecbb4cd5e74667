// Package listen is the accept loop of every daemon listener (pbs_server's
// socket and port, pbs_mom's, pbs_sched's port): it accepts each
// connection, puts it through its class's budget (connlimit: per uid on a
// Unix socket, as the kernel reports the peer, per IP address over TCP),
// gives it its handshake deadline and serves it on a goroutine of its own.
//
// Who calls: a daemon runs one Loop per listener, on a goroutine of its
// own, and ends it by closing Stop and then the listener. Serve runs on
// the connection's goroutine; the Loop closes the connection and releases
// its slot when Serve returns.
package listen

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/proto"
)

// Peer is who is at the other end of a connection, as far as the kernel
// says.
type Peer struct {
	// Local is set for a Unix-socket peer, whose credentials UID and GID
	// are.
	Local    bool
	UID, GID uint32
}

// Loop accepts the connections of one listener.
type Loop struct {
	Listener net.Listener
	Limit    *connlimit.Limiter
	// Handshake, when not zero, bounds a connection's handshake: it is
	// the connection's deadline when Serve starts.
	Handshake time.Duration
	// Stop, once closed, makes the next failed Accept end the loop (the
	// daemon closes the listener after it).
	Stop <-chan struct{}
	// CloseOnStop closes the connections being served when Stop closes,
	// so that a handler blocked reading from a peer ends.
	CloseOnStop bool
	// StopGrace, with CloseOnStop, lets a connection be read for this
	// long after Stop closes and then shuts only its reading side: a
	// blocked read ends, but a request being handled (or one already
	// sent, read within the grace) still gets its answer written. A
	// server that stops (qterm, a deposed leader) answers what it was
	// asked rather than leaving callers with a dropped connection.
	StopGrace time.Duration
	// Conns, when set, counts the goroutines serving connections.
	Conns *sync.WaitGroup
	// Log, when set, hears of failed accepts and of Unix-socket peers
	// whose credentials cannot be read.
	Log hclog.Logger
	// FailOnError ends the loop with a failed Accept's error (other than
	// a timeout); without it the loop tries again after a pause.
	FailOnError bool
	// Serve serves one admitted connection.
	Serve func(nc net.Conn, peer Peer, slot *connlimit.Slot)
}

// acceptPause is how long the loop waits after a failed Accept (out of
// descriptors, say) before it tries again.
const acceptPause = 50 * time.Millisecond

// Run accepts until Stop is closed (it then returns nil) or, with
// FailOnError, Accept fails.
func (l *Loop) Run() error {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			select {
			case <-l.Stop:
				return nil
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if l.FailOnError {
				return fmt.Errorf("accept: %w", err)
			}
			if l.Log != nil {
				l.Log.Error("accept failed", "error", err)
			}
			time.Sleep(acceptPause)
			continue
		}
		peer, slot := l.admit(nc)
		if slot == nil {
			continue
		}
		if l.Conns != nil {
			l.Conns.Add(1)
		}
		go l.serve(nc, peer, slot)
	}
}

// admit puts a new connection through the budget: per uid on a Unix
// socket, per IP address over TCP. A nil slot means it was refused (and
// closed).
func (l *Loop) admit(nc net.Conn) (Peer, *connlimit.Slot) {
	if _, unix := nc.(*net.UnixConn); !unix {
		return Peer{}, l.Limit.Admit(connlimit.PeerKey(nc), nc)
	}
	uid, gid, err := proto.PeerCreds(nc)
	if err != nil {
		if l.Log != nil {
			l.Log.Error("cannot read peer credentials", "error", err)
		}
		nc.Close()
		return Peer{}, nil
	}
	return Peer{Local: true, UID: uid, GID: gid}, l.Limit.Admit(connlimit.UIDKey(uid), nc)
}

// serve runs Serve on an admitted connection.
func (l *Loop) serve(nc net.Conn, peer Peer, slot *connlimit.Slot) {
	if l.Conns != nil {
		defer l.Conns.Done()
	}
	defer slot.Release()
	defer nc.Close()
	if l.CloseOnStop {
		done := make(chan struct{})
		defer close(done)
		go l.endOnStop(nc, done)
	}
	if l.Handshake > 0 {
		nc.SetDeadline(time.Now().Add(l.Handshake))
	}
	l.Serve(nc, peer, slot)
}

// endOnStop ends nc's reads once Stop closes (after StopGrace), unless
// done closes first.
func (l *Loop) endOnStop(nc net.Conn, done <-chan struct{}) {
	select {
	case <-l.Stop:
	case <-done:
		return
	}
	if l.StopGrace > 0 {
		t := time.NewTimer(l.StopGrace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-done:
			return
		}
		if r, ok := nc.(interface{ CloseRead() error }); ok && r.CloseRead() == nil {
			return
		}
	}
	nc.Close()
}

// Interrupt wakes l's blocked Accept without closing l (a TCP or Unix
// listener; any other is closed): a Loop whose Stop is closed then
// returns, and l, still open, can be handed to another Loop (Resume),
// what connects meanwhile waiting in the kernel's queue.
func Interrupt(l net.Listener) {
	if d, ok := l.(deadliner); ok {
		d.SetDeadline(time.Now())
		return
	}
	l.Close()
}

// Resume makes an interrupted listener accept again.
func Resume(l net.Listener) {
	if d, ok := l.(deadliner); ok {
		d.SetDeadline(time.Time{})
	}
}

// ByKind tells a daemon's handed-over listeners apart: its Unix socket
// and its TCP port (nil for one not among them).
func ByKind(ls []net.Listener) (unix, tcp net.Listener) {
	for _, l := range ls {
		if _, ok := l.(*net.UnixListener); ok {
			unix = l
		} else {
			tcp = l
		}
	}
	return unix, tcp
}

// deadliner is a listener whose Accept can be woken (TCP and Unix).
type deadliner interface {
	SetDeadline(time.Time) error
}

// Unix opens a daemon's Unix socket at path for every local user,
// replacing a stale one (the daemon tells callers apart by their
// credentials, Peer).
func Unix(path string) (net.Listener, error) {
	os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		l.Close()
		return nil, fmt.Errorf("chmod %s: %w", path, err)
	}
	return l, nil
}
