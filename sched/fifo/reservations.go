package fifo

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gopbs/gopbs/sched/core"
)

// Reservations, as OpenPBS's scheduler handles them: before the cycle's
// jobs, every reservation that needs a verdict (unconfirmed, altered, or
// holding a node that went down) is placed on the calendar, occurrence by
// occurrence, and confirmed, moved, denied or left degraded; every
// confirmed one then keeps its nodes on the calendar for its windows, so
// that no job starts (or backfills) into them. The jobs of an open
// reservation's queue are placed apart, on what the reservation holds.

// Comments for jobs of reservations, and reasons for reservations.
const (
	cResvNodes = "Not enough of the reservation's resources are free: "
)

// holdReservations confirms what needs it and holds every reservation
// that keeps nodes on the calendar (cx.Cal); it runs before any job is
// placed.
func (p *Pipeline) holdReservations(cx *Context, plan *core.Plan) {
	w := cx.World
	if len(w.Resvs) == 0 {
		return
	}
	var pending []*core.Resv
	for _, r := range w.Resvs {
		switch {
		case r.State == core.ResvUnconfirmed || r.State == core.ResvAltered:
			pending = append(pending, r)
		case r.Maintenance && r.Holds():
			cx.Cal.HoldResv(r) // the manager's hosts: never moved
		case r.Holds() && r.State == core.ResvDegraded && w.Now.Before(r.RetryAt):
			// Not yet to be tried again (reserve_retry_time): it keeps
			// what it has up.
			cx.Cal.HoldResv(r)
		case r.Holds() && (r.State == core.ResvDegraded || lostNode(w, r)):
			pending = append(pending, r)
		case r.Holds():
			cx.Cal.HoldResv(r)
		}
	}
	// The earliest first: it has least time left to be told.
	sort.SliceStable(pending, func(a, b int) bool {
		return pending[a].Occurrences[0].Start.Before(pending[b].Occurrences[0].Start)
	})
	for _, r := range pending {
		where, why := placeResv(cx, r)
		if where == nil {
			plan.DenyResv(r, why)
			if r.Holds() && r.State != core.ResvAltered {
				cx.Cal.HoldResv(r) // degraded: it keeps what is up
			} else if r.State == core.ResvAltered {
				cx.Cal.HoldResv(r) // its old times stand
			}
			continue
		}
		if r.State == core.ResvAltered || !sameWhere(r, where) || r.State != core.ResvRunning && r.State != core.ResvConfirmed {
			plan.ConfirmResv(r, where)
		}
		for i := range r.Occurrences {
			r.Occurrences[i].Where = where[i]
		}
		if r.State == core.ResvUnconfirmed {
			// As the server will have it: later verdicts of the cycle
			// name it as a conflict.
			r.State = core.ResvConfirmed
		}
		cx.Cal.HoldResv(r)
	}
}

// lostNode reports whether a node r holds for an occurrence is down.
func lostNode(w *core.World, r *core.Resv) bool {
	for _, o := range r.Occurrences {
		for _, ch := range o.Where {
			if n := w.Node(ch.Node); n == nil || !n.Up() && n.State&core.NodeBusy == 0 {
				return true
			}
		}
	}
	return false
}

func sameWhere(r *core.Resv, where [][]core.Chunk) bool {
	for i, o := range r.Occurrences {
		if len(o.Where) != len(where[i]) {
			return false
		}
		for k := range o.Where {
			if o.Where[k].Node != where[i][k].Node {
				return false
			}
		}
	}
	return true
}

// placeResv places each of r's occurrences on the calendar, the nodes it
// has (those up) first so that a move changes as little as it can. It
// returns the placements, or nil and why not, naming what is in the way.
func placeResv(cx *Context, r *core.Resv) ([][]core.Chunk, string) {
	w := cx.World
	now := w.Now
	out := make([][]core.Chunk, len(r.Occurrences))
	for i, o := range r.Occurrences {
		from := o.Start
		if from.Before(now) {
			from = now
		}
		end := o.Start.Add(r.Duration)
		if !end.After(from) {
			return nil, "its window is over"
		}
		pseudo := &core.Job{ID: r.ID, Queue: r.Queue, Select: r.Select, Place: r.Place, Totals: r.Totals, Walltime: end.Sub(from)}
		var order []*core.Node
		if len(o.Where) > 0 {
			seen := map[string]bool{}
			for _, ch := range o.Where {
				if n := w.Node(ch.Node); n != nil && n.Up() && !seen[n.Name] {
					seen[n.Name] = true
					order = append(order, n)
				}
			}
			for _, n := range w.Nodes {
				if !seen[n.Name] {
					order = append(order, n)
				}
			}
		}
		where, ok := cx.Cal.PlaceAt(pseudo, from, order, true)
		if !ok {
			return nil, conflict(w, r, from, end, i)
		}
		out[i] = where
	}
	return out, ""
}

// conflict says why r's occurrence from..end has no room: the other
// reservations and the running jobs that hold nodes then.
func conflict(w *core.World, r *core.Resv, from, end time.Time, occ int) string {
	var with []string
	for _, o := range w.Resvs {
		if o == r || !o.Holds() {
			continue
		}
		for _, oc := range o.Occurrences {
			if oc.Start.Before(end) && from.Before(oc.Start.Add(o.Duration)) && len(oc.Where) > 0 {
				with = append(with, o.ID+" ("+strings.Join(nodeNames(oc.Where), ",")+")")
				break
			}
		}
	}
	jobs := 0
	for _, j := range w.Jobs {
		if !j.Running() || len(j.Where) == 0 || w.ResvOf(j.Queue) != nil {
			continue
		}
		wall := j.Walltime
		if wall <= 0 {
			wall = w.MaxWalltime(j.Queue)
		}
		if wall <= 0 || j.Stime.Add(wall).After(from) {
			if jobs < 3 {
				with = append(with, "running job "+j.ID+" ("+strings.Join(nodeNames(j.Where), ",")+")")
			}
			jobs++
		}
	}
	if jobs > 3 {
		with = append(with, fmt.Sprintf("%d more running jobs", jobs-3))
	}
	what := "no room for it"
	if len(r.Occurrences) > 1 {
		what = fmt.Sprintf("no room for occurrence %d (%s)", occ+1, from.Format("2006-01-02 15:04"))
	}
	if len(with) == 0 {
		return what + ": not enough nodes up"
	}
	return what + ": it would overlap " + strings.Join(with, ", ")
}

func nodeNames(where []core.Chunk) []string {
	var out []string
	for _, ch := range where {
		if !slices.Contains(out, ch.Node) {
			out = append(out, ch.Node)
		}
	}
	return out
}

// inResv reports whether j waits in an open reservation's queue: it is
// placed by runReservations, not by the cycle's order.
func inResv(cx *Context, j *core.Job) bool {
	return len(cx.World.Resvs) > 0 && cx.World.ResvOf(j.Queue) != nil
}

// runReservations starts the queued jobs of each open reservation whose
// queue is started, in submission order, on what the reservation holds
// less what its running jobs use: a calendar of its own over its nodes.
func (p *Pipeline) runReservations(cx *Context, plan *core.Plan) {
	w := cx.World
	for _, r := range w.Resvs {
		if q := w.Queue(r.Queue); !r.Open(w.Now) || q == nil || !q.Started || !q.Execution {
			continue
		}
		sub := resvWorld(w, r)
		cal := core.NewCalendar(sub)
		for _, j := range w.Jobs {
			if j.Queue != r.Queue || !j.Queued() {
				continue
			}
			// A shrink-to-fit job ends by the reservation's end (stf.go).
			jr, where, ok := placeNow(cal, j, nil, true, r.End())
			if !ok {
				plan.Comment(j, notRunning+cResvNodes+r.ID)
				continue
			}
			plan.RunFor(j, where, "Job run in reservation "+r.ID+" on "+w.Now.Format("Mon Jan 02 at 15:04"), false, stfWalltime(j, jr))
			cal.Start(jr, where)
		}
	}
}

// resvWorld is r's share of w: its nodes with what it holds on each
// (the whole node for an exclusive reservation), and its running jobs.
func resvWorld(w *core.World, r *core.Resv) *core.World {
	held := map[string]core.Amounts{}
	var names []string
	for _, ch := range r.Occurrences[0].Where {
		n := w.Node(ch.Node)
		if n == nil {
			continue
		}
		if held[ch.Node] == nil {
			names = append(names, ch.Node)
			held[ch.Node] = core.Amounts{}
			if r.Place.Exclusive() {
				held[ch.Node] = n.Avail.Clone()
				continue
			}
		}
		if !r.Place.Exclusive() {
			for k, v := range ch.Amounts() {
				held[ch.Node][k] += v
			}
		}
	}
	var jobs []*core.Job
	assigned := map[string]core.Amounts{}
	for _, j := range w.Jobs {
		if j.Queue != r.Queue || !j.Running() {
			continue
		}
		jobs = append(jobs, j)
		for _, ch := range j.Where {
			if assigned[ch.Node] == nil {
				assigned[ch.Node] = core.Amounts{}
			}
			for k, v := range ch.Amounts() {
				assigned[ch.Node][k] += v
			}
		}
	}
	nodes := make([]*core.Node, 0, len(names))
	for _, name := range names {
		n := *w.Node(name)
		n.Avail, n.Assigned = held[name], assigned[name]
		nodes = append(nodes, &n)
	}
	return core.NewWorld(w.Now, nil, nil, nodes, jobs)
}
