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
