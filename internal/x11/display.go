package x11

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Display is a parsed DISPLAY: [host]:number[.screen]. A host of "" or
// "unix" is the local display, over its Unix socket.
type Display struct {
	Host   string
	Number int
	Screen int
}

// BasePort is the TCP port of display 0; display n listens on BasePort+n.
const BasePort = 6000

// maxDisplay bounds a display number (its port must fit).
const maxDisplay = 65535 - BasePort

// ParseDisplay reads a DISPLAY value.
func ParseDisplay(s string) (Display, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return Display{}, fmt.Errorf("DISPLAY %q: no ':' before the display number", s)
	}
	d := Display{Host: s[:i]}
	if strings.HasPrefix(d.Host, "[") && strings.HasSuffix(d.Host, "]") {
		d.Host = d.Host[1 : len(d.Host)-1]
	}
	num, screen, hasScreen := strings.Cut(s[i+1:], ".")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > maxDisplay || num != strconv.Itoa(n) {
		return Display{}, fmt.Errorf("DISPLAY %q: display number %q is not a number from 0 to %d", s, num, maxDisplay)
	}
	d.Number = n
	if hasScreen {
		sc, err := strconv.Atoi(screen)
		if err != nil || sc < 0 || screen != strconv.Itoa(sc) {
			return Display{}, fmt.Errorf("DISPLAY %q: screen %q is not a number", s, screen)
		}
		d.Screen = sc
	}
	return d, nil
}

// Local reports whether the display is reached over its Unix socket.
func (d Display) Local() bool { return d.Host == "" || d.Host == "unix" }

// String writes d as DISPLAY does.
func (d Display) String() string {
	host := d.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(d.Number) + "." + strconv.Itoa(d.Screen)
}

// SocketPath is the Unix socket of local display n.
func SocketPath(n int) string { return "/tmp/.X11-unix/X" + strconv.Itoa(n) }

// Dial connects to the display: a local one over its Unix socket (the
// abstract one Linux servers also offer when the file is not there), any
// other over TCP.
func (d Display) Dial(timeout time.Duration) (net.Conn, error) {
	if d.Local() {
		c, err := net.DialTimeout("unix", SocketPath(d.Number), timeout)
		if err == nil {
			return c, nil
		}
		if c, err2 := net.DialTimeout("unix", "@"+SocketPath(d.Number), timeout); err2 == nil {
			return c, nil
		}
		return nil, err
	}
	return net.DialTimeout("tcp", net.JoinHostPort(d.Host, strconv.Itoa(BasePort+d.Number)), timeout)
}
