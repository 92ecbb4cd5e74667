package state

import (
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/resvspec"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Resvs is the reservation table: every reservation by number, and what
// each holds of each node as read from its nodes (read once per change
// of them or of the resource table: every start checks what running
// reservations hold). Two things are kept in memory only: why the
// scheduler denied the recent ones, which are gone (Deny), and the retry
// time a cycle was asked for, per degraded reservation (AskRetry).
type Resvs struct {
	table func() *resc.Table
	bySeq map[int64]*model.Resv
	held  map[int64]heldNodes
	// denied survives Load: a rollback reloads the table, and a denial
	// was never stored.
	denied     map[string]Denied
	retryAsked map[int64]int64
}

// Denied is a reservation the scheduler denied: gone, its reason known
// for a while after.
type Denied struct {
	Reason string
	At     time.Time
}

// heldNodes is a reservation's nodes as Held last read them.
type heldNodes struct {
	nodes string
	rt    *resc.Table
	held  map[string]map[string]float64
	err   error
}

// NewResvs makes an empty table whose reservations' nodes are read with
// the resource table table gives (the server's current one).
func NewResvs(table func() *resc.Table) *Resvs {
	t := &Resvs{table: table, denied: map[string]Denied{}}
	t.Load(nil)
	return t
}

// Load replaces the reservations with those of a store snapshot; the
// denials are kept.
func (t *Resvs) Load(rs []*model.Resv) {
	t.bySeq = make(map[int64]*model.Resv, len(rs))
	t.held = map[int64]heldNodes{}
	t.retryAsked = map[int64]int64{}
	for _, r := range rs {
		t.bySeq[r.Seq] = r
	}
}

// Len is how many reservations there are.
func (t *Resvs) Len() int { return len(t.bySeq) }

// Get is reservation seq.
func (t *Resvs) Get(seq int64) (*model.Resv, bool) {
	r, ok := t.bySeq[seq]
	return r, ok
}

// Insert adds a new reservation.
func (t *Resvs) Insert(r *model.Resv) { t.bySeq[r.Seq] = r }

// Remove takes reservation seq out, with what was read of it.
func (t *Resvs) Remove(seq int64) {
	delete(t.bySeq, seq)
	delete(t.held, seq)
	delete(t.retryAsked, seq)
}

// All is every reservation by number, in order. The table may change
// while it is ranged over (a reservation removed is not seen after).
func (t *Resvs) All() iter.Seq[*model.Resv] {
	return func(yield func(*model.Resv) bool) {
		for _, seq := range slices.Sorted(maps.Keys(t.bySeq)) {
			if r, ok := t.bySeq[seq]; ok && !yield(r) {
				return
			}
		}
	}
}

// Lookup finds the reservation id names; a reservation denied lately
// is PBSE_UNKRESVID with its reason, any other PBSE_UNKRESVID.
func (t *Resvs) Lookup(id string) (*model.Resv, error) {
	id = strings.TrimSpace(id)
	if kind, seq, ok := model.ParseResvID(id); ok {
		if r, ok := t.bySeq[seq]; ok && r.Kind == kind {
			return r, nil
		}
	}
	if d, ok := t.denied[id]; ok {
		return nil, proto.Errorf(proto.PBSE_UNKRESVID, "%s (denied: %s)", id, d.Reason)
	}
	return nil, proto.Errorf(proto.PBSE_UNKRESVID, "%s", id)
}

// OfQueue is the reservation whose queue is queue ("R12", not a
// destination with a server).
func (t *Resvs) OfQueue(queue string) (*model.Resv, bool) {
	if kind, seq, ok := model.ParseResvID(queue); ok && !strings.Contains(queue, ".") {
		if r, ok := t.bySeq[seq]; ok && r.Kind == kind {
			return r, true
		}
	}
	return nil, false
}

// Held is what reservation r holds on each node, by resource: a copy,
// which the caller may change.
func (t *Resvs) Held(r *model.Resv) (map[string]map[string]float64, error) {
	nodes, rt := r.Nodes(), t.table()
	c, ok := t.held[r.Seq]
	if !ok || c.nodes != nodes || c.rt != rt {
		held, err := resvspec.Amounts(rt, nodes)
		c = heldNodes{nodes: nodes, rt: rt, held: held, err: err}
		t.held[r.Seq] = c
	}
	if c.err != nil {
		return nil, c.err
	}
	out := make(map[string]map[string]float64, len(c.held))
	for node, m := range c.held {
		out[node] = maps.Clone(m)
	}
	return out, nil
}

// Deny keeps why reservation id (gone) was denied.
func (t *Resvs) Deny(id, reason string, at time.Time) {
	t.denied[id] = Denied{Reason: reason, At: at}
}

// Stale reports whether a denial kept longer than keep at now is due to
// be forgotten (ForgetDenials).
func (t *Resvs) Stale(now time.Time, keep time.Duration) bool {
	for _, d := range t.denied {
		if now.Sub(d.At) > keep {
			return true
		}
	}
	return false
}

// ForgetDenials forgets the denials kept longer than keep at now.
func (t *Resvs) ForgetDenials(now time.Time, keep time.Duration) {
	maps.DeleteFunc(t.denied, func(_ string, d Denied) bool { return now.Sub(d.At) > keep })
}

// RetryAsked is the retry time a cycle was last asked for reservation
// seq (0: none).
func (t *Resvs) RetryAsked(seq int64) int64 { return t.retryAsked[seq] }

// AskRetry records that a cycle was asked for reservation seq's retry
// time at.
func (t *Resvs) AskRetry(seq, at int64) { t.retryAsked[seq] = at }
