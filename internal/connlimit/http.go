package connlimit

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/gopbs/gopbs/internal/hostaddr"
)

// Listener admits every connection it accepts through its budget before
// an HTTP server (the metrics and web listeners) reads a byte of it. A
// connection the budget refuses, or closes to make room before it sent a
// byte, is first told Refusal (a whole HTTP response; "" for none).
type Listener struct {
	net.Listener
	Limit   *Limiter
	Refusal string
	// Key names a connection's peer for the budget (nil: HostKey with
	// this host's addresses, so that every local user counts as one peer
	// however many of its addresses they connect from).
	Key func(net.Conn) string

	host hostaddr.Cache
}

// Accept returns the next admitted connection, a *Conn.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &Conn{Conn: nc, refusal: l.Refusal}
		key := ""
		if l.Key != nil {
			key = l.Key(nc)
		} else {
			key = HostKey(nc, l.host.Local)
		}
		c.peer = key
		if c.slot = l.Limit.Admit(key, c); c.slot != nil {
			return c, nil
		}
		// Refused: Admit closed it, which told the client.
	}
}

// Conn is an admitted connection: closing it gives its slot back.
type Conn struct {
	net.Conn
	slot    *Slot
	refusal string
	peer    string

	mu   sync.Mutex
	read bool
}

// Peer is the budget's name for the connection's peer.
func (c *Conn) Peer() string { return c.peer }

func (c *Conn) Read(p []byte) (int, error) {
	c.mu.Lock()
	c.read = true
	c.mu.Unlock()
	return c.Conn.Read(p)
}

// Close gives the slot back; a connection closed before a byte was read
// from it was refused (or made room for another) and is told so first.
func (c *Conn) Close() error {
	c.mu.Lock()
	unread := !c.read
	c.read = true // once
	c.mu.Unlock()
	if unread && c.refusal != "" && c.slot == nil {
		c.Conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		c.Conn.Write([]byte(c.refusal))
	}
	c.slot.Release()
	return c.Conn.Close()
}

type connKey struct{}

// ConnContext is an http.Server's ConnContext that lets handlers find
// their connection (Established, ConnOf).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// ConnOf is the admitted connection of a request's context, nil for one
// that did not come through a Listener.
func ConnOf(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

// Established marks the connection of a request's context as proven: it
// sent a whole request that was let in, and can no longer be closed to
// make room.
func Established(ctx context.Context) {
	if c := ConnOf(ctx); c != nil && c.slot != nil {
		c.slot.Established()
	}
}
