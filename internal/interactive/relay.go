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
// ranges over C. Send copies and waits while the queue is full (the
// writer's peer is slow to read: the relay waits for it); once Close is
// called Send drops what it is given.
type Queue struct {
	mu    sync.Mutex // held while sending, and to close
	c     chan []byte
	ended bool
}

// NewQueue makes a queue of n frames.
func NewQueue(n int) *Queue { return &Queue{c: make(chan []byte, n)} }

// C is what the writer ranges over; it ends after Close.
func (q *Queue) C() <-chan []byte { return q.c }

// Send queues a copy of p.
func (q *Queue) Send(p []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.ended {
		q.c <- append([]byte(nil), p...)
	}
}

// Close ends the queue. A writer that stopped early must still drain C
// for a Send waiting on a full queue to return.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.ended {
		q.ended = true
		close(q.c)
	}
}
