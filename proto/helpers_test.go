package proto

import (
	"bytes"
	"net"
	"runtime"
	"time"
)

// nopConn is a net.Conn over a buffer, for encoding frames in tests.
type nopConn struct{ b *bytes.Buffer }

func (n nopConn) Read(p []byte) (int, error)       { return n.b.Read(p) }
func (n nopConn) Write(p []byte) (int, error)      { return n.b.Write(p) }
func (n nopConn) Close() error                     { return nil }
func (n nopConn) LocalAddr() net.Addr              { return &net.UnixAddr{} }
func (n nopConn) RemoteAddr() net.Addr             { return &net.UnixAddr{} }
func (n nopConn) SetDeadline(time.Time) error      { return nil }
func (n nopConn) SetReadDeadline(time.Time) error  { return nil }
func (n nopConn) SetWriteDeadline(time.Time) error { return nil }

type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.total = ms.TotalAlloc
}
