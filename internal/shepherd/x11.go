// X11 forwarding of an interactive job (qsub -I -X; internal/x11 says
// the scheme): the shepherd listens on the loopback addresses for the
// job's display (localhost:N, N from 10 up as sshd numbers them), writes
// a one-job cookie to an Xauthority file only the job's owner reads, and relays
// each X client that proves it holds that cookie to qsub as a channel of
// the interactive connection. A client without it is closed before
// anything of it is relayed. Channels end from either side; all end with
// the job.

package shepherd

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/interactive"
	"github.com/gopbs/gopbs/internal/x11"
)

// x11FirstDisplay is the first display number tried (sshd's
// X11DisplayOffset); x11Displays how many are tried.
const (
	x11FirstDisplay = 10
	x11Displays     = 1000
)

// x11SetupWait bounds how long a client has to send its setup.
const x11SetupWait = 30 * time.Second

// x11QueueBytes is how much a channel holds for a client that is slow
// to read; a client that lets more pile up loses its channel.
const x11QueueBytes = 16 << 20

// x11Forward is an interactive job's X11 forwarding.
type x11Forward struct {
	// lns listen for the job's display on every loopback address
	// "localhost" may name (127.0.0.1, and ::1 where the host has it):
	// a port left free on one would let another user's listener take
	// the job's clients, and their cookie (sshd binds both so too).
	lns     []net.Listener
	display int
	cookie  []byte
	// authDir is root's, made for the job (0711): it holds the
	// Xauthority file, the owner's (0600), which the owner can read
	// but neither move nor replace; root never writes into a
	// directory the owner controls.
	authDir  string
	authFile string
	fc       *interactive.Conn
	// chans are the job's X clients, each a channel to qsub.
	chans *interactive.Channels
}

// forwardX11 starts the forwarding to qsub over fc for the owner's job:
// the listeners, the cookie and its Xauthority file. It returns the
// job's DISPLAY and XAUTHORITY.
func (sh *shepherd) forwardX11(fc *interactive.Conn) (*x11Forward, []string, error) {
	fwd := &x11Forward{fc: fc, chans: interactive.NewChannels(fc, x11QueueBytes), cookie: make([]byte, x11.CookieLen)}
	if _, err := rand.Read(fwd.cookie); err != nil {
		return nil, nil, fmt.Errorf("x11 cookie: %w", err)
	}
	for n := x11FirstDisplay; n < x11FirstDisplay+x11Displays && fwd.lns == nil; n++ {
		if lns, ok := listenLoopback(x11.BasePort + n); ok {
			fwd.lns, fwd.display = lns, n
		}
	}
	if fwd.lns == nil {
		return nil, nil, fmt.Errorf("no free X11 display from %d to %d", x11FirstDisplay, x11FirstDisplay+x11Displays-1)
	}
	if err := fwd.writeAuth(sh.usr.UID, sh.usr.GID); err != nil {
		fwd.close()
		return nil, nil, fmt.Errorf("x11 authority file: %w", err)
	}
	for _, ln := range fwd.lns {
		go fwd.accept(ln)
	}
	return fwd, []string{"DISPLAY=localhost:" + strconv.Itoa(fwd.display) + ".0", "XAUTHORITY=" + fwd.authFile}, nil
}

// listenLoopback listens on port at 127.0.0.1 and, where the host has
// IPv6, at ::1; ok is false when either address has the port taken.
func listenLoopback(port int) ([]net.Listener, bool) {
	p := strconv.Itoa(port)
	l4, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", p))
	if err != nil {
		return nil, false
	}
	l6, err := net.Listen("tcp6", net.JoinHostPort("::1", p))
	switch {
	case err == nil:
		return []net.Listener{l4, l6}, true
	case errors.Is(err, syscall.EADDRINUSE):
		l4.Close()
		return nil, false
	}
	return []net.Listener{l4}, true // no IPv6 loopback here
}

// writeAuth writes the job's cookie for its display to a file only the
// owner (uid) may read, in a directory made for it.
func (fwd *x11Forward) writeAuth(uid, gid uint32) error {
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	var auth []byte
	for _, e := range x11.LocalEntries(host, fwd.display, fwd.cookie) {
		auth, _ = x11.AppendAuthority(auth, e)
	}
	if fwd.authDir, err = os.MkdirTemp("", "pbs-x11-"); err != nil {
		return err
	}
	if err := os.Chmod(fwd.authDir, 0o711); err != nil {
		return err
	}
	fwd.authFile = filepath.Join(fwd.authDir, "Xauthority")
	f, err := os.OpenFile(fwd.authFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(auth)
	if err == nil && os.Geteuid() == 0 {
		err = f.Chown(int(uid), int(gid))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (fwd *x11Forward) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go fwd.client(c)
	}
}

// client checks a new X client's setup against the job's cookie, then
// relays it as a new channel.
func (fwd *x11Forward) client(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(x11SetupWait))
	buf := make([]byte, 0, x11.MaxSetup)
	var setup x11.Setup
	var n int
	for {
		if len(buf) == cap(buf) {
			c.Close()
			return
		}
		k, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		var perr error
		setup, n, perr = x11.ParseSetup(buf)
		if perr == nil {
			break
		}
		if !errors.Is(perr, x11.ErrShort) || err != nil {
			c.Close()
			return
		}
	}
	if setup.AuthName != x11.CookieName || subtle.ConstantTimeCompare(setup.AuthData, fwd.cookie) != 1 {
		c.Close() // not the job's: nothing of it is relayed
		return
	}
	c.SetReadDeadline(time.Time{})
	setup.AuthName, setup.AuthData = "", nil
	first, _ := x11.AppendSetup(nil, setup)
	first = append(first, buf[n:]...)
	ch, q, ok := fwd.chans.Open(c)
	if !ok {
		c.Close()
		return
	}
	go func() {
		q.Drain(c, nil)
		c.Close()
	}()
	if fwd.fc.Send(&interactive.Frame{Kind: interactive.KindX11Open, Channel: ch}) != nil || fwd.fc.SendX11(ch, first) != nil {
		fwd.chans.End(ch, false)
		return
	}
	interactive.Relay(c, func(p []byte) error { return fwd.fc.SendX11(ch, p) })
	fwd.chans.End(ch, true)
}

// close ends the forwarding: the listener, every channel, the cookie's
// file.
func (fwd *x11Forward) close() {
	for _, ln := range fwd.lns {
		ln.Close()
	}
	fwd.chans.Close()
	if fwd.authDir != "" {
		os.RemoveAll(fwd.authDir)
	}
}
