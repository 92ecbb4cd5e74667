// Package events is pbs_server's in-process hub of job state changes: the
// server publishes each change once it is durable, and every subscriber
// (a client on the event stream, the web page) reads the changes its
// filter selects, in order, each with its sequence number.
//
// The hub keeps the last changes in one ring shared by every subscriber;
// a subscriber holds only its place in it. So a subscriber costs nothing
// per event it is not interested in, a resume after a reconnect replays
// from the ring, and a slow subscriber is bounded by how far behind it
// may fall (its buffer, in events it selects), never by the server's
// memory. Publish never waits for a subscriber: one that falls further
// behind is cut off, and Err says why.
//
// The package is pure: callers pass the events in (their times included).
package events

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// Event is one committed change of a job: its state, substate or queue.
type Event struct {
	Seq        uint64 // the hub's sequence number, from 1, one per event
	Time       int64  // when the change committed, Unix milliseconds
	JobID      string // "12.srv", an array "12[].srv", a subjob "12[3].srv"
	Owner      string // the job's owner (user name, no host)
	Queue      string
	State      string // the state letter (Q, H, W, R, E, F, B ...)
	Substate   string // the substate number
	ExitStatus *int   // set once the job has ended with an exit status
	Comment    string
}

// Filter selects events; an empty field selects every value. A job id of
// an array ("12[].srv") selects the array and each of its subjobs. The
// hub enforces no rights: the server narrows the filter to what the
// subscriber may see before subscribing.
type Filter struct {
	JobIDs []string
	Owner  string
	Queue  string
}

// ErrGap is the refusal of a resume whose events are no longer all kept
// (or were never published: the sequence number is ahead of the hub's).
// The subscriber must read the state afresh, then subscribe from now.
var ErrGap = errors.New("events: the changes since that sequence number are no longer kept")

// ErrSlow is why a subscriber that fell too far behind was cut off.
var ErrSlow = errors.New("events: subscriber cut off: too slow")

// ErrClosed is why subscribers end when the hub closes.
var ErrClosed = errors.New("events: the event hub closed")

// Hub fans committed events out to subscribers. The zero Hub is not
// usable: make one with NewHub.
type Hub struct {
	mu     sync.RWMutex
	ring   []Event // ring[(seq-1) % len(ring)] holds event seq
	last   uint64  // the last sequence number given
	subs   map[*Sub]struct{}
	closed bool
	// The subscriptions by what selects them, so that an event costs
	// only the subscribers it may concern: each is in one index, by its
	// filter's narrowest field (job ids, else owner, else queue), or in
	// all when its filter is empty.
	all     map[*Sub]struct{}
	byJob   map[string]map[*Sub]struct{}
	byOwner map[string]map[*Sub]struct{}
	byQueue map[string]map[*Sub]struct{}
	counts  map[*Sub]int // PublishAll's scratch
}

// NewHub makes a hub that keeps the last retain events for resuming
// (at least one).
func NewHub(retain int) *Hub {
	return &Hub{ring: make([]Event, max(retain, 1)), subs: map[*Sub]struct{}{}, all: map[*Sub]struct{}{},
		byJob: map[string]map[*Sub]struct{}{}, byOwner: map[string]map[*Sub]struct{}{}, byQueue: map[string]map[*Sub]struct{}{},
		counts: map[*Sub]int{}}
}

// index adds s to (or, with add false, removes it from) the index its
// filter puts it in (mu held).
func (h *Hub) index(s *Sub, add bool) {
	put := func(m map[string]map[*Sub]struct{}, key string) {
		set := m[key]
		if add {
			if set == nil {
				set = map[*Sub]struct{}{}
				m[key] = set
			}
			set[s] = struct{}{}
			return
		}
		delete(set, s)
		if len(set) == 0 {
			delete(m, key)
		}
	}
	switch f := &s.f; {
	case f.ids != nil:
		for id := range f.ids {
			put(h.byJob, id)
		}
	case f.owner != "":
		put(h.byOwner, f.owner)
	case f.queue != "":
		put(h.byQueue, f.queue)
	case add:
		h.all[s] = struct{}{}
	default:
		delete(h.all, s)
	}
	if add {
		h.subs[s] = struct{}{}
	} else {
		delete(h.subs, s)
	}
}

// Restore fills a new hub with events already published in an earlier
// run (the server keeps them in its store), so that sequence numbers go
// on from the last and a subscriber resumes across a restart. evs must be
// in sequence order without gaps; only the last Retain() are kept. It
// must be called before any Publish or Subscribe.
func (h *Hub) Restore(evs []Event) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last != 0 || len(h.subs) > 0 {
		return fmt.Errorf("events: restore into a hub in use (last %d)", h.last)
	}
	for i, e := range evs {
		if e.Seq == 0 || i > 0 && e.Seq != evs[i-1].Seq+1 {
			return fmt.Errorf("events: restore: event %d follows %d", e.Seq, evs[max(i-1, 0)].Seq)
		}
	}
	if len(evs) > len(h.ring) {
		evs = evs[len(evs)-len(h.ring):]
	}
	for _, e := range evs {
		h.ring[h.slot(e.Seq)] = e
	}
	if len(evs) > 0 {
		h.last = evs[len(evs)-1].Seq
	}
	return nil
}

// Retain is how many events the hub keeps.
func (h *Hub) Retain() int { return len(h.ring) }

// Last is the sequence number of the last event published (0: none).
func (h *Hub) Last() uint64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.last
}

// Subscribers is how many subscriptions are open.
func (h *Hub) Subscribers() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.subs)
}

func (h *Hub) slot(seq uint64) int { return int((seq - 1) % uint64(len(h.ring))) }

// first is the oldest sequence number kept (last+1 when none is; mu held).
func (h *Hub) first() uint64 {
	if h.last < uint64(len(h.ring)) {
		return 1
	}
	return h.last - uint64(len(h.ring)) + 1
}

// Publish gives e the next sequence number, keeps it and hands it to
// every subscriber whose filter selects it. It never waits for a
// subscriber: one that would fall more than its buffer behind is cut off
// (ErrSlow). It returns the sequence number.
func (h *Hub) Publish(e Event) uint64 { return h.PublishAll([]Event{e}) }

// PublishAll publishes evs in order, as Publish each (their Seq fields
// are set), in one pass over the subscribers: a commit's thousands of
// changes cost each subscriber once, however many there are. It returns
// the last sequence number.
func (h *Hub) PublishAll(evs []Event) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range evs {
		h.last++
		evs[i].Seq = h.last
		h.ring[h.slot(h.last)] = evs[i]
	}
	counts := h.counts
	for s := range h.all {
		h.count(counts, s, evs[0].Seq, len(evs))
	}
	for i := range evs {
		e := &evs[i]
		for _, set := range []map[*Sub]struct{}{h.byJob[e.JobID], h.byJob[ArrayOf(e.JobID)], h.byOwner[e.Owner], h.byQueue[e.Queue]} {
			for s := range set {
				// A subscriber listed under both an array and one of its
				// subjobs counts an event once.
				if s.marked != e.Seq && s.f.match(e) {
					s.marked = e.Seq
					h.count(counts, s, e.Seq, 1)
				}
			}
		}
	}
	for s, n := range counts {
		delete(counts, s)
		if p := s.pending.Add(int64(n)); p > int64(s.buffer) {
			h.index(s, false)
			s.end(fmt.Errorf("%w: %d changes behind (its buffer holds %d)", ErrSlow, p, s.buffer))
			continue
		}
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return h.last
}

// count adds n events from seq on to what s has to take (mu held).
func (h *Hub) count(counts map[*Sub]int, s *Sub, seq uint64, n int) {
	if counts[s] == 0 && s.pending.Load() == 0 {
		// Nothing of its own was undelivered: its place moves to its
		// first new event, past everything it does not select (so it
		// never scans that, nor is cut off when the ring turns over).
		s.next = max(s.next, seq)
	}
	counts[s] += n
}

// Subscribe starts a subscription to the events f selects. since 0 means
// from now; otherwise it is Resume(f, since, buffer). buffer bounds how
// many selected events the subscriber may fall behind before it is cut
// off (at most Retain()).
func (h *Hub) Subscribe(f Filter, since uint64, buffer int) (*Sub, error) {
	if since == 0 {
		return h.subscribe(f, 0, buffer, false)
	}
	return h.Resume(f, since, buffer)
}

// Resume subscribes after sequence number after, the last one the
// subscriber saw (0: before the first event ever published): every
// selected event after it is delivered first. It fails with ErrGap when
// some of those events are no longer kept, when after is ahead of the
// hub, or when more of them are kept than the buffer holds.
func (h *Hub) Resume(f Filter, after uint64, buffer int) (*Sub, error) {
	return h.subscribe(f, after, buffer, true)
}

func (h *Hub) subscribe(f Filter, after uint64, buffer int, resume bool) (*Sub, error) {
	buffer = min(max(buffer, 1), len(h.ring))
	c := make(chan Event)
	s := &Sub{C: c, c: c, hub: h, f: compile(f), buffer: buffer, wake: make(chan struct{}, 1), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	s.next = h.last + 1
	s.after = h.last
	if resume {
		switch {
		case after > h.last:
			return nil, fmt.Errorf("%w: %d is ahead of the last change, %d (the server's state was reset)", ErrGap, after, h.last)
		case after+1 < h.first():
			return nil, fmt.Errorf("%w: the oldest kept is %d, asked from %d", ErrGap, h.first(), after+1)
		}
		n := 0
		for seq := after + 1; seq <= h.last; seq++ {
			if s.f.match(&h.ring[h.slot(seq)]) {
				n++
			}
		}
		if n > buffer {
			return nil, fmt.Errorf("%w: %d changes since %d, more than a subscriber's buffer (%d)", ErrGap, n, after, buffer)
		}
		s.next, s.after = after+1, after
		s.pending.Store(int64(n))
	}
	h.index(s, true)
	go s.pump()
	if s.pending.Load() > 0 {
		s.wake <- struct{}{}
	}
	return s, nil
}

// Close ends every subscription (ErrClosed) and refuses new ones.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.index(s, false)
		s.end(ErrClosed)
	}
}

// take appends to out the selected events from s's place on, at most
// cap(out), and moves s's place past what it looked at.
func (h *Hub) take(s *Sub, out []Event) ([]Event, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if first := h.first(); s.next < first {
		if s.pending.Load() > 0 {
			return out, fmt.Errorf("%w: fell behind the %d changes kept", ErrSlow, len(h.ring))
		}
		s.next = first
	}
	// Bound the scan so that a reader never holds the lock long.
	limit := min(h.last, s.next+maxScan)
	for ; s.next <= limit && len(out) < cap(out); s.next++ {
		if e := &h.ring[h.slot(s.next)]; s.f.match(e) {
			out = append(out, *e)
		}
	}
	return out, nil
}

// Sub is one subscription. Events arrive on C in sequence order; C is
// closed when the subscription ends, and Err then says why.
type Sub struct {
	C <-chan Event

	c      chan Event
	hub    *Hub
	after  uint64 // the sequence number the subscription starts after
	f      filter
	buffer int
	// next is the next sequence number to look at: written by Publish
	// under the hub's write lock and by the pump under its read lock
	// (the pump is the only reader that touches it).
	next uint64
	// pending counts selected events published and not yet on C.
	pending atomic.Int64
	// marked is the last event PublishAll counted for it (its lock).
	marked uint64
	wake   chan struct{}
	done   chan struct{}
	once   sync.Once
	err    error // set before done is closed
}

// pumpBatch is how many events the pump takes from the ring at a time,
// and maxScan how many it looks at while holding the hub's read lock.
const (
	pumpBatch = 64
	maxScan   = 8192
)

// pump moves s's events from the ring to C, one reader per subscription,
// so that Publish only counts and signals.
func (s *Sub) pump() {
	defer close(s.c)
	buf := make([]Event, 0, pumpBatch)
	for {
		batch, err := s.hub.take(s, buf[:0])
		if err != nil {
			s.hub.drop(s)
			s.end(err)
			return
		}
		if len(batch) == 0 {
			select {
			case <-s.wake:
				continue
			case <-s.done:
				return
			}
		}
		for _, e := range batch {
			select {
			case s.c <- e:
				s.pending.Add(-1)
			case <-s.done:
				return
			}
		}
	}
}

// drop takes s off the hub's list.
func (h *Hub) drop(s *Sub) {
	h.mu.Lock()
	if _, ok := h.subs[s]; ok {
		h.index(s, false)
	}
	h.mu.Unlock()
}

// end ends s with err (nil: closed by its reader), once.
func (s *Sub) end(err error) {
	s.once.Do(func() {
		s.err = err
		close(s.done)
	})
}

// Err is why the subscription ended: ErrSlow or ErrClosed (wrapped, with
// detail), nil while it runs or after Close. Read it once C is closed.
func (s *Sub) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// After is the sequence number the subscription starts after: the hub's
// last when it subscribed from now, or the one it resumed after. A
// subscriber that saw nothing since resumes after it.
func (s *Sub) After() uint64 { return s.after }

// Close ends the subscription; C is closed soon after.
func (s *Sub) Close() {
	s.hub.drop(s)
	s.end(nil)
}

// filter is a Filter made ready for matching.
type filter struct {
	ids          map[string]bool
	owner, queue string
}

func compile(f Filter) filter {
	c := filter{owner: f.Owner, queue: f.Queue}
	if len(f.JobIDs) > 0 {
		c.ids = make(map[string]bool, len(f.JobIDs))
		for _, id := range f.JobIDs {
			c.ids[id] = true
		}
	}
	return c
}

func (f *filter) match(e *Event) bool {
	if f.owner != "" && e.Owner != f.owner || f.queue != "" && e.Queue != f.queue {
		return false
	}
	return f.ids == nil || f.ids[e.JobID] || f.ids[ArrayOf(e.JobID)]
}

// ArrayOf is the id of the array a subjob id belongs to ("12[3].srv" ->
// "12[].srv"), "" for any other id.
func ArrayOf(id string) string {
	open := strings.IndexByte(id, '[')
	if open < 0 {
		return ""
	}
	end := strings.IndexByte(id[open:], ']')
	if end <= 1 {
		return ""
	}
	for _, c := range id[open+1 : open+end] {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return id[:open+1] + id[open+end:]
}
