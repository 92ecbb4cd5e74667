package proto

import (
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// StatusFrames is a status answer built object by object, each encoded
// as it is added, in frames of at most a chunk of objects: a server
// renders a long listing into it without keeping every object's
// attributes (and the garbage of them) until the answer is sent. With
// Stream, every full frame is sent at once by a goroutine of its own, so
// that the peer decodes while the rest is rendered, and a slow peer never
// holds up the renderer (who may hold a lock).
type StatusFrames struct {
	chunk int
	cur   encodedFrame   // the frame being filled
	full  []encodedFrame // full frames not handed to a stream
	st    *frameStream
}

type encodedFrame struct {
	count int
	objs  []byte
}

// frameStream sends full frames, in order, as they come.
type frameStream struct {
	c    *Conn
	seq  uint64
	wake chan struct{}
	done chan struct{}

	mu      sync.Mutex
	queue   []encodedFrame
	closed  bool // no more frames will come
	aborted bool // drop what is queued
	err     error
}

// NewStatusFrames starts an answer of frames of up to chunk objects.
func NewStatusFrames(chunk int) *StatusFrames { return &StatusFrames{chunk: max(chunk, 1)} }

// Stream sends every full frame to request seq on c as soon as the next
// one begins. Until Send or Abort returns, nothing else may write to c.
func (f *StatusFrames) Stream(c *Conn, seq uint64) {
	f.st = &frameStream{c: c, seq: seq, wake: make(chan struct{}, 1), done: make(chan struct{})}
	f.full = nil
	go f.st.run()
}

// Add encodes one object; attrs may be reused once Add returns.
func (f *StatusFrames) Add(name string, attrs []Attr) {
	if f.cur.count == f.chunk {
		next := encodedFrame{objs: make([]byte, 0, len(f.cur.objs)+len(f.cur.objs)/8)} // much the same size
		f.push(f.cur)
		f.cur = next
	}
	f.cur.objs = AppendStatus(f.cur.objs, &Status{Name: name, Attrs: attrs})
	f.cur.count++
}

func (f *StatusFrames) push(fr encodedFrame) {
	if f.st == nil {
		f.full = append(f.full, fr)
		return
	}
	f.st.mu.Lock()
	f.st.queue = append(f.st.queue, fr)
	f.st.mu.Unlock()
	f.st.signal()
}

// Send writes what is left of the answer to request seq on c (the same
// connection as Stream's, if it streams), one frame per chunk (at least
// one); the last carries tail's fields other than Objects.
func (f *StatusFrames) Send(c *Conn, seq uint64, tail *StatusReply) error {
	if err := f.stop(false); err != nil {
		return err
	}
	var empty StatusReply
	var body []byte
	send := func(fr encodedFrame, rest *StatusReply, more bool) error {
		body = appendStatusReplyEncoded(body[:0], fr.count, fr.objs, rest)
		return c.Send(Header{Type: MsgReply, Seq: seq, More: more}, msgpack.RawMessage(body))
	}
	for _, fr := range f.full {
		if err := send(fr, &empty, true); err != nil {
			return err
		}
	}
	return send(f.cur, tail, false)
}

// Abort ends a stream without sending the rest, once what it is sending
// now is sent.
func (f *StatusFrames) Abort() { f.stop(true) }

// stop ends the stream, if any, after it has sent its queue (or dropped
// it when abort), and returns its first error.
func (f *StatusFrames) stop(abort bool) error {
	st := f.st
	if st == nil {
		return nil
	}
	f.st = nil
	st.mu.Lock()
	st.closed, st.aborted = true, abort
	st.mu.Unlock()
	st.signal()
	<-st.done
	return st.err
}

func (st *frameStream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

func (st *frameStream) run() {
	defer close(st.done)
	var empty StatusReply
	var body []byte
	for {
		st.mu.Lock()
		queue, closed := st.queue, st.closed
		st.queue = nil
		if st.aborted {
			queue = nil
		}
		st.mu.Unlock()
		for _, fr := range queue {
			if st.err != nil {
				break
			}
			body = appendStatusReplyEncoded(body[:0], fr.count, fr.objs, &empty)
			st.err = st.c.Send(Header{Type: MsgReply, Seq: st.seq, More: true}, msgpack.RawMessage(body))
		}
		if closed && len(queue) == 0 {
			return
		}
		if len(queue) == 0 {
			<-st.wake
		}
	}
}
