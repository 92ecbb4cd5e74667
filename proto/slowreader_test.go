package proto

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// unsent is what the stream of f holds rendered and unwritten.
func (f *StatusFrames) unsent() int {
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	return f.st.unsent
}

// bigObject is an object of about 1.5 KiB, as a subjob with every
// attribute is.
var bigObject = []Attr{{Name: "Variable_List", Value: "PAD=" + strings.Repeat("x", 1500)}}

// A peer that never reads a long listing holds at most MaxUnsent (and the
// frame being filled) of it; the renderer waits for it without its lock,
// stops once the write timeout cuts the peer off, and Send says so.
func TestStatusFramesCutOffSlowReader(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe() // b never reads
	defer b.Close()
	ca := NewConn(a, 0)
	defer ca.Close()
	ca.SetWriteTimeout(300 * time.Millisecond)
	f := NewStatusFrames(1000)
	var held sync.Mutex // the renderer's lock
	held.Lock()
	f.Stream(ca, 7, &held)
	type result struct {
		added, peak int
		err         error
	}
	rendered := make(chan result, 1)
	go func() {
		var r result
		for ; r.added < 10000; r.added++ {
			if r.peak = max(r.peak, f.unsent()); !f.Add(fmt.Sprint(r.added), bigObject) {
				break
			}
		}
		r.err = f.Send(ca, 7, &StatusReply{})
		rendered <- r // before letting go of held: it has it until the end
		held.Unlock()
	}()
	// The renderer lets go of its lock while it waits, before it is done.
	held.Lock()
	select {
	case <-rendered:
		t.Fatal("the renderer finished without waiting for the reader")
	default:
	}
	held.Unlock()
	r := <-rendered
	if r.added == 10000 {
		t.Fatalf("all %d objects rendered for a reader who reads nothing", r.added)
	}
	if limit := MaxUnsent + statusFrameBytes + 2048; r.peak > limit {
		t.Errorf("%d bytes unsent, more than %d", r.peak, limit)
	}
	var slow *SlowReaderError
	if !errors.As(r.err, &slow) || !errors.Is(r.err, os.ErrDeadlineExceeded) {
		t.Fatalf("answer to a reader who reads nothing: %v", r.err)
	}
	if slow.Unsent < MaxUnsent || slow.Unsent > MaxUnsent+statusFrameBytes+2048 || slow.After != 300*time.Millisecond {
		t.Errorf("slow reader error %+v", slow)
	}
	t.Logf("%d objects rendered, at most %d bytes unsent: %v", r.added, r.peak, r.err)
}

// A reader who lags behind the renderer gets the whole listing, in order:
// the renderer waits for it, lock let go, and goes on.
func TestStatusFramesWaitForLaggingReader(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer b.Close()
	ca := NewConn(a, 0)
	defer ca.Close()
	const n = 3000 // several times MaxUnsent
	f := NewStatusFrames(1000)
	var held sync.Mutex
	held.Lock()
	f.Stream(ca, 3, &held)
	done := make(chan error, 1)
	go func() {
		for i := range n {
			f.Add(fmt.Sprint(i), bigObject)
		}
		done <- f.Send(ca, 3, &StatusReply{Version: 9})
		held.Unlock()
	}()
	// Start reading only once the renderer waits for it.
	held.Lock()
	held.Unlock()
	cb := NewConn(b, 0)
	var got int
	for {
		h, body, err := cb.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var part StatusReply
		if err := DecodeStatusReply(body, &part); err != nil {
			t.Fatal(err)
		}
		for _, o := range part.Objects {
			if o.Name != fmt.Sprint(got) {
				t.Fatalf("object %d is %q", got, o.Name)
			}
			got++
		}
		if !h.More {
			if part.Version != 9 {
				t.Errorf("last frame %+v", part)
			}
			break
		}
	}
	if err := <-done; err != nil || got != n {
		t.Fatalf("%d of %d objects: %v", got, n, err)
	}
	if f.Pauses() == 0 {
		t.Error("the renderer never waited")
	}
}

// A Send the peer does not take within the write timeout fails as a slow
// reader; a large frame's encoding buffer is not kept afterwards.
func TestSendWriteTimeout(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer b.Close()
	ca := NewConn(a, 0)
	defer ca.Close()
	ca.SetWriteTimeout(100 * time.Millisecond)
	start := time.Now()
	err := ca.Send(Header{Type: MsgReply}, &StatusReply{Live: []string{strings.Repeat("x", 1<<20)}})
	var slow *SlowReaderError
	if !errors.As(err, &slow) || slow.Unsent < 1<<20 || time.Since(start) > 5*time.Second {
		t.Fatalf("send to a peer who reads nothing: %v after %v", err, time.Since(start))
	}
	if c := ca.out.Cap(); c > keptOut {
		t.Errorf("a %d-byte encoding buffer kept", c)
	}
}
