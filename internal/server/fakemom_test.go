package server

import (
	"net"
	"strconv"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// addMomNode makes node name, whose mom listens on 127.0.0.1:port (a
// fake mom), known to s.
func addMomNode(s *Server, name string, port int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := model.NewObject(name)
	o.Set(proto.AttrNodeMom, "", "127.0.0.1")
	o.Set(proto.AttrNodePort, "", strconv.Itoa(port))
	s.nodes.Put(o)
}

// serveFakeMom listens on a free port as a mom does for the server (the
// handshake with the cluster key, one goroutine per connection) and
// answers each request with what answer returns; it returns the port.
func serveFakeMom(tb testing.TB, key []byte, answer func(h proto.Header, body msgpack.RawMessage) (proto.Header, any)) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				c := proto.NewConn(nc, 0)
				if _, err := proto.ServerHandshake(c, "n1", func(proto.Hello) ([]byte, error) { return key, nil }); err != nil {
					return
				}
				for {
					h, body, err := c.Recv()
					if err != nil {
						return
					}
					rh, reply := answer(h, body)
					c.Send(rh, reply)
				}
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}
