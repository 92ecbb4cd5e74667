package interactive

import (
	"io"
	"sync"
)

// Relay sends what r gives through send, at most MaxData bytes at a
// time, until r ends or send fails (the job's output to qsub; an X11
// channel's bytes either way).
func Relay(r io.Reader, send func([]byte) error) {
	buf := make([]byte, MaxData)
	for {
		n, err := r.Read(buf)
		if n > 0 && send(buf[:n]) != nil {
			return
		}
		if err != nil {
			return
		}
	}
}

// Queue holds what one X11 channel received for its writer, which
// ranges over C and says what it wrote (Written). Send never waits: it
// copies p and reports false when the queue would hold more than its
// bound (the writer's peer does not read: the caller ends the channel
// rather than stall every other); once Close is called Send drops what
// it is given.
type Queue struct {
	mu    sync.Mutex
	c     chan []byte
	bytes int // queued, not yet written
	max   int
	ended bool
}

// queueFrames bounds the frames a queue holds, whatever their size.
const queueFrames = 4096

// NewQueue makes a queue of at most max bytes.
func NewQueue(max int) *Queue { return &Queue{c: make(chan []byte, queueFrames), max: max} }

// C is what the writer ranges over; it ends after Close.
func (q *Queue) C() <-chan []byte { return q.c }

// Send queues a copy of p; false means the queue is full.
func (q *Queue) Send(p []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ended {
		return true
	}
	if q.bytes+len(p) > q.max || len(q.c) == cap(q.c) {
		return false
	}
	q.bytes += len(p)
	q.c <- append([]byte(nil), p...)
	return true
}

// Written says the writer is done with n bytes taken from C.
func (q *Queue) Written(n int) {
	q.mu.Lock()
	q.bytes -= n
	q.mu.Unlock()
}

// Close ends the queue: C ends once drained.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.ended {
		q.ended = true
		close(q.c)
	}
}

// Drain writes what q holds to w until q ends or a write fails, saying
// what it wrote; first, when not nil, rewrites the first frame (qsub
// puts the user's cookie into the client's setup).
func (q *Queue) Drain(w io.Writer, first func([]byte) ([]byte, error)) {
	for p := range q.C() {
		n := len(p)
		var err error
		if first != nil {
			p, err = first(p)
			first = nil
		}
		if err == nil {
			_, err = w.Write(p)
		}
		q.Written(n)
		if err != nil {
			return
		}
	}
}

// Channels are one end's X11 channels over a connection: what the other
// end sends for each waits in its Queue for the channel's writer (Drain).
// Both ends use them: the shepherd numbers the channels (Open), qsub
// takes the numbers it is told (Add).
type Channels struct {
	c      *Conn
	max    int // each queue's bound
	mu     sync.Mutex
	m      map[uint32]channel
	next   uint32
	closed bool
}

type channel struct {
	q    *Queue
	peer io.Closer // closed with the channels (nil: the writer's own)
}

// NewChannels serves channels over c, each queue holding at most max
// bytes.
func NewChannels(c *Conn, max int) *Channels {
	return &Channels{c: c, max: max, m: map[uint32]channel{}}
}

// Open numbers a new channel to peer and returns its queue; ok is false
// once the channels are closed.
func (cs *Channels) Open(peer io.Closer) (ch uint32, q *Queue, ok bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return 0, nil, false
	}
	cs.next++
	q = NewQueue(cs.max)
	cs.m[cs.next] = channel{q: q, peer: peer}
	return cs.next, q, true
}

// Add takes channel ch, numbered by the other end, and returns its queue.
func (cs *Channels) Add(ch uint32) *Queue {
	q := NewQueue(cs.max)
	cs.mu.Lock()
	cs.m[ch] = channel{q: q}
	cs.mu.Unlock()
	return q
}

// Write queues what the other end sent for channel ch (an ended one
// drops it). A peer that does not keep up loses its channel rather than
// stall the terminal and the other channels.
func (cs *Channels) Write(ch uint32, p []byte) {
	cs.mu.Lock()
	c, ok := cs.m[ch]
	cs.mu.Unlock()
	if ok && !c.q.Send(p) {
		cs.End(ch, true)
	}
}

// End ends channel ch once what was queued for it is written; tell says
// the other end should hear of it (this end's peer went away).
func (cs *Channels) End(ch uint32, tell bool) {
	cs.mu.Lock()
	c, ok := cs.m[ch]
	delete(cs.m, ch)
	cs.mu.Unlock()
	if !ok {
		return
	}
	c.q.Close()
	if tell {
		cs.c.Send(&Frame{Kind: KindX11Close, Channel: ch})
	}
}

// Close ends every channel (the session is over), closing their peers.
func (cs *Channels) Close() {
	cs.mu.Lock()
	cs.closed = true
	m := cs.m
	cs.m = map[uint32]channel{}
	cs.mu.Unlock()
	for _, c := range m {
		if c.peer != nil {
			c.peer.Close()
		}
		c.q.Close()
	}
}
