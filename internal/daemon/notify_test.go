package daemon

import (
	"net"
	"path/filepath"
	"testing"
	"time"
)

// Notify sends its state to $NOTIFY_SOCKET as one datagram, and does
// nothing without it.
func TestNotify(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if err := Notify("READY=1"); err != nil {
		t.Fatalf("without a socket: %v", err)
	}
	path := filepath.Join(t.TempDir(), "notify")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t.Setenv("NOTIFY_SOCKET", path)
	if err := Notify("READY=1"); err != nil {
		t.Fatal(err)
	}
	l.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, err := l.Read(buf)
	if err != nil || string(buf[:n]) != "READY=1" {
		t.Errorf("read %q, %v; want READY=1", buf[:n], err)
	}
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "none"))
	if err := Notify("READY=1"); err == nil {
		t.Error("a socket that is not there: no error")
	}
}
