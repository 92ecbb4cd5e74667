package core

import (
	"time"

	"github.com/gopbs/gopbs/resc"
)

// ResvState is a reservation's state as a policy needs it.
type ResvState uint8

// Reservation states.
const (
	// ResvUnconfirmed waits for the scheduler: its occurrences have no
	// nodes yet.
	ResvUnconfirmed ResvState = iota + 1
	// ResvConfirmed holds its nodes for its occurrences; its window has
	// not begun.
	ResvConfirmed
	// ResvRunning is in its window: its queue's jobs run on its nodes.
	ResvRunning
	// ResvDegraded lost a node the scheduler could not replace; it keeps
	// the others, and is tried again each cycle.
	ResvDegraded
	// ResvAltered has new times (pbs_ralter) to confirm; its nodes are
	// those of its old times, kept if they still fit.
	ResvAltered
	// ResvEnding is being deleted: its jobs are ending; it holds nothing.
	ResvEnding
)

// Resv is a reservation: windows of time during which its nodes are
// kept for the jobs of its queue.
type Resv struct {
	ID    string
	Queue string
	Owner string
	State ResvState
	// Select, Place and Totals are what it reserves.
	Select resc.Select
	Place  resc.Place
	Totals Amounts
	// Duration is each occurrence's length.
	Duration time.Duration
	// Occurrences are those not over, the current (or next) first; an
	// advance or maintenance reservation has one.
	Occurrences []Occurrence
	// Maintenance marks a manager's reservation of whole hosts: its
	// nodes are the manager's choice, never moved.
	Maintenance bool
	// RetryAt is when a DEGRADED reservation may be tried again on other
	// nodes (the server's reserve_retry_time after its last failure);
	// zero: at once.
	RetryAt time.Time
}

// Occurrence is one window of a reservation and the chunks it holds
// (none until confirmed).
type Occurrence struct {
	Start time.Time
	Where []Chunk
}

// End is when the current occurrence ends.
func (r *Resv) End() time.Time {
	if len(r.Occurrences) == 0 {
		return time.Time{}
	}
	return r.Occurrences[0].Start.Add(r.Duration)
}

// Open reports whether r's window holds now and its queue's jobs may
// run: it runs (or runs degraded) on nodes.
func (r *Resv) Open(now time.Time) bool {
	if len(r.Occurrences) == 0 || r.State != ResvRunning && r.State != ResvDegraded {
		return false
	}
	o := r.Occurrences[0]
	return len(o.Where) > 0 && !now.Before(o.Start) && now.Before(r.End())
}

// Holds reports whether r keeps its nodes on the calendar: confirmed,
// running, degraded or altered (its old nodes, until the new times are
// confirmed or denied).
func (r *Resv) Holds() bool {
	switch r.State {
	case ResvConfirmed, ResvRunning, ResvDegraded, ResvAltered:
		return true
	}
	return false
}

// SetResvs gives the world its reservations (by their queues too).
func (w *World) SetResvs(rs []*Resv) {
	w.Resvs = rs
	w.resvByQueue = nil
	if len(rs) > 0 {
		w.resvByQueue = make(map[string]*Resv, len(rs))
		for _, r := range rs {
			w.resvByQueue[r.Queue] = r
		}
	}
}

// ResvOf is the reservation whose queue is queue, or nil.
func (w *World) ResvOf(queue string) *Resv { return w.resvByQueue[queue] }

// resvHeld reports whether running job j's resources are the open
// reservation's of its queue: the reservation's hold covers them, and
// they end with it.
func (w *World) resvHeld(j *Job) bool {
	if len(w.resvByQueue) == 0 {
		return false
	}
	r := w.resvByQueue[j.Queue]
	return r != nil && r.Open(w.Now)
}

// HoldResv keeps r's nodes on the calendar for each of its occurrences
// that has them, from its start (or now) to its end: what its chunks
// take, or the whole nodes for an exclusive reservation. A placement
// never overlaps it. Its own running jobs hold nothing more (Reset).
func (c *Calendar) HoldResv(r *Resv) {
	for _, o := range r.Occurrences {
		from, to := max(o.Start.Unix(), c.now), o.Start.Add(r.Duration).Unix()
		if to <= from {
			continue
		}
		if r.Place.Exclusive() {
			c.mark++
			for _, ch := range o.Where {
				if cn := c.node(ch.Node); cn != nil && cn.mark != c.mark {
					cn.mark = c.mark
					c.addSpan(cn.node.Name, span{from: from, to: to, amt: cn.cap})
				}
			}
			continue
		}
		for _, ch := range o.Where {
			c.addSpan(ch.Node, span{from: from, to: to, amt: ch.Amounts()})
		}
	}
}
