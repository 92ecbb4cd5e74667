package qsub

import (
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gopbs/gopbs/internal/interactive"
	"github.com/gopbs/gopbs/internal/x11"
)

// qsub -I -X: the job's X clients come as channels of the interactive
// connection (internal/shepherd's x11.go checked them against the job's
// own cookie and took it out); each is connected to the user's display
// with the user's real cookie put into its setup, so the real cookie
// never leaves this host.

// displayDialWait bounds connecting to the user's display.
const displayDialWait = 10 * time.Second

// x11QueueBytes is how much a channel holds while the display is being
// connected to or is slow to read; more, and the channel ends.
const x11QueueBytes = 16 << 20

// x11Relay is qsub's end of the forwarding.
type x11Relay struct {
	display    x11.Display
	authName   string
	authData   []byte
	fc         *interactive.Conn
	chans      *interactive.Channels
	warnedOnce sync.Once
	warn       func(string)
}

// newX11Relay finds the user's cookie for display d (XAUTHORITY, else
// ~/.Xauthority; none: the display may need none).
func newX11Relay(d x11.Display, fc *interactive.Conn, warn func(string)) *x11Relay {
	r := &x11Relay{display: d, fc: fc, chans: interactive.NewChannels(fc, x11QueueBytes), warn: warn}
	path := os.Getenv("XAUTHORITY")
	if path == "" {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, ".Xauthority")
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return r
	}
	entries, err := x11.ParseAuthority(b)
	if err != nil {
		warn("X11: " + path + ": " + err.Error())
		return r
	}
	host, _ := os.Hostname()
	var ips []net.IP
	if !d.Local() {
		ips, _ = net.LookupIP(d.Host)
	}
	r.authName, r.authData, _ = x11.FindCookie(entries, d, host, ips)
	return r
}

// open connects a new channel to the display.
func (r *x11Relay) open(ch uint32) {
	go r.serve(ch, r.chans.Add(ch))
}

// serve connects ch to the display and relays it both ways until either
// side ends.
func (r *x11Relay) serve(ch uint32, q *interactive.Queue) {
	c, err := r.display.Dial(displayDialWait)
	if err != nil {
		r.warnedOnce.Do(func() { r.warn("X11: cannot connect to display " + r.display.String() + ": " + err.Error()) })
		r.chans.End(ch, true)
		return
	}
	go func() {
		interactive.Relay(c, func(p []byte) error { return r.fc.SendX11(ch, p) })
		r.chans.End(ch, true)
	}()
	q.Drain(c, r.withCookie)
	c.Close()
}

// withCookie puts the user's cookie into the client's setup, the
// channel's first frame (the shepherd sends it whole).
func (r *x11Relay) withCookie(p []byte) ([]byte, error) {
	s, n, err := x11.ParseSetup(p)
	if err != nil {
		return nil, err
	}
	s.AuthName, s.AuthData = r.authName, r.authData
	out, err := x11.AppendSetup(nil, s)
	if err != nil {
		return nil, err
	}
	return append(out, p[n:]...), nil
}
