package proto

import (
	"errors"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// MaxUnsent bounds the bytes of a streamed status answer that are
// rendered and not yet written to the peer. At the bound the renderer
// waits for the peer to read, with its lock let go (see Stream), so that
// a long listing costs a peer that reads slowly, or not at all, this much
// and no more; with Conn's write timeout such a peer is then cut off.
// Honest readers keep up: a few frames in flight are enough for the
// decoding to overlap the rendering.
const MaxUnsent = 256 << 10

// resumeUnsent is where a renderer that waited goes on: well below
// MaxUnsent, so that it renders many frames per wait, not one per frame
// sent (each wait costs a wake-up, which a busy host makes slow).
const resumeUnsent = MaxUnsent / 4

// statusFrameBytes ends a frame once its objects take this many bytes,
// whatever their number: frames are what a stream counts and frees, so
// they must be small beside MaxUnsent.
const statusFrameBytes = 64 << 10

// StatusFrames is a status answer built object by object, each encoded
// as it is added, in frames of at most a chunk of objects (and about
// statusFrameBytes): a server renders a long listing into it without
// keeping every object's attributes (and the garbage of them) until the
// answer is sent. With Stream, every full frame is sent at once by a
// goroutine of its own, so that the peer decodes while the rest is
// rendered, and a slow peer never holds up the renderer's lock.
type StatusFrames struct {
	chunk  int
	cur    encodedFrame   // the frame being filled
	full   []encodedFrame // full frames not handed to a stream
	st     *frameStream
	held   sync.Locker // the renderer's lock, let go while Add waits
	pauses int         // how often Add waited
}

type encodedFrame struct {
	count int
	objs  []byte
}

// frameStream sends full frames, in order, as they come.
type frameStream struct {
	c    *Conn
	seq  uint64
	done chan struct{}

	mu      sync.Mutex
	cond    *sync.Cond // on mu: a frame came, was sent, or the stream ends
	queue   []encodedFrame
	unsent  int  // bytes of the queue and of the frame being sent
	closed  bool // no more frames will come
	aborted bool // drop what is queued
	err     error
}

// NewStatusFrames starts an answer of frames of up to chunk objects.
func NewStatusFrames(chunk int) *StatusFrames { return &StatusFrames{chunk: max(chunk, 1)} }

// Stream sends every full frame to request seq on c as soon as the next
// one begins. Until Send or Abort returns, nothing else may write to c.
// held is the lock the renderer holds while it adds (nil for none): Add
// lets go of it while it waits for the peer to read.
func (f *StatusFrames) Stream(c *Conn, seq uint64, held sync.Locker) {
	st := &frameStream{c: c, seq: seq, done: make(chan struct{})}
	st.cond = sync.NewCond(&st.mu)
	f.st, f.held = st, held
	f.full = nil
	go st.run()
}

// Add encodes one object; attrs may be reused once Add returns. When a
// stream has MaxUnsent bytes waiting for the peer, Add first waits until
// the peer reads, with held unlocked meanwhile: what the renderer was
// going through may have changed when Add returns (Pauses tells). Add
// returns false once the stream failed (the peer went away, or was cut
// off as a slow reader): the renderer should stop, and Send says why.
func (f *StatusFrames) Add(name string, attrs []Attr) bool {
	return f.AddStatus(&Status{Name: name, Attrs: attrs})
}

// AddStatus is Add of a whole object (a job's with its allocation).
func (f *StatusFrames) AddStatus(s *Status) bool {
	if f.cur.count == f.chunk || len(f.cur.objs) >= statusFrameBytes {
		next := encodedFrame{objs: make([]byte, 0, len(f.cur.objs)+len(f.cur.objs)/8)} // much the same size
		if !f.push(f.cur) {
			return false
		}
		f.cur = next
	}
	f.cur.objs = AppendStatus(f.cur.objs, s)
	f.cur.count++
	return true
}

// Pauses is how many times Add waited for the peer with the renderer's
// lock let go.
func (f *StatusFrames) Pauses() int { return f.pauses }

// push hands a full frame to the stream, waiting for room when the
// stream is at MaxUnsent; false when the stream failed.
func (f *StatusFrames) push(fr encodedFrame) bool {
	st := f.st
	if st == nil {
		f.full = append(f.full, fr)
		return true
	}
	st.mu.Lock()
	if st.err != nil {
		st.mu.Unlock()
		return false
	}
	st.queue = append(st.queue, fr)
	st.unsent += len(fr.objs)
	st.cond.Broadcast()
	if st.unsent < MaxUnsent {
		st.mu.Unlock()
		return true
	}
	// Never wait on a peer with the renderer's lock.
	f.pauses++
	if f.held != nil {
		f.held.Unlock()
	}
	for st.unsent > resumeUnsent && st.err == nil {
		st.cond.Wait()
	}
	ok := st.err == nil
	st.mu.Unlock()
	if f.held != nil {
		f.held.Lock()
	}
	return ok
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

// Collect decodes an answer that was not streamed (no Stream call) into
// one reply: its objects in order, with tail's other fields. It serves
// readers in the server's own process (the web status page), which take
// the objects, not the frames.
func (f *StatusFrames) Collect(tail *StatusReply) (*StatusReply, error) {
	if f.st != nil {
		return nil, errors.New("status frames: Collect on a streamed answer")
	}
	out := &StatusReply{Errors: tail.Errors, Version: tail.Version, Epoch: tail.Epoch, Live: tail.Live}
	var empty StatusReply
	var body []byte
	for _, fr := range append(f.full, f.cur) {
		if fr.count == 0 {
			continue
		}
		body = appendStatusReplyEncoded(body[:0], fr.count, fr.objs, &empty)
		var part StatusReply
		if err := DecodeStatusReply(body, &part); err != nil {
			return nil, err
		}
		out.Objects = append(out.Objects, part.Objects...)
	}
	return out, nil
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
	st.cond.Broadcast()
	st.mu.Unlock()
	<-st.done
	return st.err
}

func (st *frameStream) run() {
	defer close(st.done)
	var empty StatusReply
	var body []byte
	st.mu.Lock()
	defer st.mu.Unlock()
	for {
		for len(st.queue) == 0 && !st.closed {
			st.cond.Wait()
		}
		if st.aborted {
			st.queue = nil
		}
		if len(st.queue) == 0 {
			return // closed, and all sent
		}
		fr := st.queue[0]
		st.queue[0] = encodedFrame{}
		st.queue = st.queue[1:]
		st.mu.Unlock()
		body = appendStatusReplyEncoded(body[:0], fr.count, fr.objs, &empty)
		err := st.c.Send(Header{Type: MsgReply, Seq: st.seq, More: true}, msgpack.RawMessage(body))
		st.mu.Lock()
		st.unsent -= len(fr.objs)
		if err != nil {
			var slow *SlowReaderError
			if errors.As(err, &slow) {
				slow.Unsent += st.unsent // what waited behind the frame
			}
			st.err = err
			st.queue, st.unsent = nil, 0
		}
		st.cond.Broadcast()
		if err != nil {
			return
		}
	}
}
