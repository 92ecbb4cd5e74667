package server

import (
	"sync"
	"sync/atomic"

	"github.com/gopbs/gopbs/proto"
)

// momConnsPerAddr bounds the connections kept to one mom address; several
// let requests to the same host (or a simulator serving many nodes) run in
// parallel.
const momConnsPerAddr = 8

// momPool keeps authenticated connections to moms for reuse: dialing and
// the handshake cost more than a request.
type momPool struct {
	mu    sync.Mutex
	conns map[string][]*proto.Client
	next  atomic.Uint64
}

func (p *momPool) init() { p.conns = map[string][]*proto.Client{} }

// get returns a pooled client for addr, dialing a new one when fewer than
// momConnsPerAddr exist.
func (p *momPool) get(addr string, dial func() (*proto.Client, error)) (*proto.Client, error) {
	p.mu.Lock()
	cs := p.conns[addr]
	if len(cs) >= momConnsPerAddr {
		c := cs[p.next.Add(1)%uint64(len(cs))]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := dial()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.conns[addr] = append(p.conns[addr], c)
	p.mu.Unlock()
	return c, nil
}

// drop forgets a broken client.
func (p *momPool) drop(addr string, c *proto.Client) {
	p.mu.Lock()
	cs := p.conns[addr]
	for i, x := range cs {
		if x == c {
			p.conns[addr] = append(cs[:i], cs[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	c.Close()
}

// closeAll closes every pooled connection.
func (p *momPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cs := range p.conns {
		for _, c := range cs {
			c.Close()
		}
	}
	p.conns = map[string][]*proto.Client{}
}
