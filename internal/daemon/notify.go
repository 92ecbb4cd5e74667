package daemon

import (
	"fmt"
	"net"
	"os"
)

// Notify tells systemd the daemon's state (sd_notify's protocol: "READY=1"
// once it serves, "STOPPING=1" when it begins to stop), for a unit of
// Type=notify (packaging/systemd). Without $NOTIFY_SOCKET, started by hand
// or by a test, it does nothing. The daemons call it; an error is worth a
// log line, never a stop.
func Notify(state string) error {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	if addr[0] == '@' { // an abstract socket
		addr = "\x00" + addr[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("notify systemd: %w", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(state)); err != nil {
		return fmt.Errorf("notify systemd: %w", err)
	}
	return nil
}

// Ready tells systemd the daemon serves (Notify "READY=1"); a failure is
// logged, never a stop.
func (s *Started) Ready() {
	if err := Notify("READY=1"); err != nil {
		s.Log.Warn("cannot tell systemd the daemon is ready", "error", err)
	}
}
