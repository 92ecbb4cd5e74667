package fifo

// Elastic jobs (a select with a chunk count range, "2-8:ncpus=4"), after
// Windows HPC's scheduling modes. In queued mode (the default) a job
// starts with as many chunks of its range as are free now (widest), and
// before anything starts in a cycle, running elastic jobs grow toward
// their maximum in priority order (grow: seed 001's "grows running jobs
// to their maximum requested resources before it uses resources for
// backfilling"). In balanced mode every job starts at its minimum, and
// what is left is shared out by priority after the queued jobs had their
// turn; a queued job that finds no room may take chunks above their
// minimum back from running jobs (shrinkFor). The calendar and EASY
// reservations count every job at its minimum.

import (
	"slices"
	"sort"
	"time"

	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched/core"
)

// widest places an elastic job that fits at its minimum (where) with as
// many chunks as fit now, up to its maximum.
func widest(cx *Context, j *core.Job, now time.Time, nodes []*core.Node, ignoreBlocks bool, where []core.Chunk) []core.Chunk {
	if j.Select.Elastic() < 0 {
		return where
	}
	lo, hi := j.Select.NodeCount(), j.Select.MaxNodeCount()
	best := where
	for lo < hi {
		mid := (lo + hi + 1) / 2
		jn := j.At(mid)
		if !cx.limitsAllow(j, jn) {
			hi = mid - 1
			continue
		}
		if w, ok := cx.Cal.PlaceAt(jn, now, nodes, ignoreBlocks); ok {
			best, lo = w, mid
		} else {
			hi = mid - 1
		}
	}
	return best
}

// elasticRunning lists the running elastic jobs below their maximum,
// most important first (priority, then the earliest started).
func elasticRunning(w *core.World) []*core.Job {
	var out []*core.Job
	for _, j := range w.Jobs {
		if w.Ordered && j.Queued() {
			break // the rest are queued too: a deep queue is not gone through every cycle
		}
		if j.State == core.JobRunning && j.Select.Elastic() >= 0 && len(j.Where) < j.Select.MaxNodeCount() {
			out = append(out, j)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Priority != out[b].Priority {
			return out[a].Priority > out[b].Priority
		}
		return out[a].Stime.Before(out[b].Stime)
	})
	return out
}

// growth is the part of a running elastic job that more chunks would be:
// copies of its ranged spec, for the rest of its walltime.
func growth(j *core.Job, n int, now time.Time) *core.Job {
	g := *j
	c := j.Select[j.Select.Elastic()]
	c.Count, c.Max = n, 0
	g.Select = resc.Select{c}
	g.Totals = core.Amounts(g.Select.Amounts())
	if j.Walltime > 0 {
		g.Walltime = max(j.Walltime-now.Sub(j.Stime), time.Second)
	}
	return &g
}

// growCandidates are the nodes more chunks of j may go to: under
// scatter, vscatter or excl those it has none of, under pack its own
// node, else any (nil).
func growCandidates(w *core.World, j *core.Job) []*core.Node {
	held := map[string]bool{}
	for _, c := range j.Where {
		held[c.Node] = true
	}
	switch {
	case j.Place.Arrangement == resc.ArrangePack:
		if n := w.Node(j.Where[0].Node); n != nil {
			return []*core.Node{n}
		}
		return []*core.Node{}
	case j.Place.Arrangement == resc.ArrangeScatter || j.Place.Arrangement == resc.ArrangeVScatter || j.Place.Exclusive():
		out := []*core.Node{}
		for _, n := range w.Nodes {
			if !held[n.Name] {
				out = append(out, n)
			}
		}
		return out
	}
	return nil
}

// grow gives running elastic jobs, most important first, as many more
// chunks as fit now, up to their maximum; activation filters are asked
// first (Candidate.Running), and a filter that says no leaves the
// resources to others.
func (p *Pipeline) grow(cx *Context, plan *core.Plan, now time.Time) {
	for _, j := range elasticRunning(cx.World) {
		room := j.Select.MaxNodeCount() - len(j.Where)
		cands := growCandidates(cx.World, j)
		var where []core.Chunk
		lo, hi := 0, room
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if !cx.limitsAllow(j, j.At(len(j.Where)+mid)) {
				hi = mid - 1
				continue
			}
			if w, ok := cx.Cal.PlaceAt(growth(j, mid, now), now, cands, false); ok {
				where, lo = w, mid
			} else {
				hi = mid - 1
			}
		}
		if len(where) == 0 {
			continue
		}
		if s := p.activate(cx, Candidate{Job: j, Where: where, Running: true}); !s.IsRun() {
			continue
		}
		plan.Grow(j, where)
		cx.Cal.Start(growth(j, len(where), now), where)
		cx.resized(j, len(j.Where)+len(where))
	}
}

// limitsAllow reports whether elastic job j may hold what at (j at
// another count of its range) holds: under the per-user and per-group
// resource limits of the server and of j's queue (max_user_res,
// max_group_res), and within the cpus, memory and nodes the queue and the
// server have (resources_available less what running jobs hold) or let
// one job have (resources_max). A running j counts as what it holds now,
// so only its growth is added.
func (cx *Context) limitsAllow(j, at *core.Job) bool {
	held := func(r string) float64 {
		if !j.Running() {
			return 0
		}
		v, _ := j.RequestNumber(r)
		return v
	}
	want := func(r string) float64 {
		v, _ := at.RequestNumber(r)
		return v
	}
	q := cx.World.Queue(j.Queue)
	type scope struct {
		queue        string
		limits       core.ResLimits
		avail, limit core.Amounts
	}
	scopes := []scope{{"", cx.World.Server.ResLimits, cx.World.Server.ResourcesAvailable, cx.World.Server.ResourcesMax}}
	if q != nil {
		scopes = append(scopes, scope{j.Queue, q.ResLimits, q.ResourcesAvailable, q.ResourcesMax})
	}
	for _, sc := range scopes {
		for r, limit := range sc.limits.User {
			if u, _ := cx.Held(sc.queue, j.Owner, j.Group, r); u-held(r)+want(r) > limit {
				return false
			}
		}
		for r, limit := range sc.limits.Group {
			if _, g := cx.Held(sc.queue, j.Owner, j.Group, r); g-held(r)+want(r) > limit {
				return false
			}
		}
		for _, r := range limitResources {
			if v, ok := sc.avail[r]; ok {
				if cx.Assigned(sc.queue, r)-held(r)+want(r) > v {
					return false
				}
			} else if v, ok := sc.limit[r]; ok && want(r) > v {
				return false
			}
		}
	}
	return true
}

// resized counts running (or just started) elastic job j at n chunks
// from now on in the cycle's counts, so that the next job's limits see
// what it holds.
func (cx *Context) resized(j *core.Job, n int) {
	at := j.At(n)
	if cx.counts != nil {
		cx.counts.stop(j)
		j.Numbers = at.Numbers
		cx.counts.start(j)
	} else {
		j.Numbers = at.Numbers
	}
	cx.countsChanged()
}

// shrinkFor finds chunks above their minimum that running elastic jobs
// (the least important first, never one more important than j) could
// give back so that j has room for its minimum, and plans taking them
// back; it reports whether it did. A job gives back whole nodes (all its
// chunks there, of its range only, never its first node), the last it
// grew onto first. j starts in a later cycle, once the nodes are free.
func (p *Pipeline) shrinkFor(cx *Context, plan *core.Plan, j *core.Job, shrunk map[*core.Job]int) bool {
	var running []*core.Job
	for _, r := range cx.World.Jobs {
		if cx.World.Ordered && r.Queued() {
			break // the rest are queued too
		}
		if r.State == core.JobRunning && r.Select.Elastic() >= 0 && r.Priority <= j.Priority {
			running = append(running, r)
		}
	}
	sort.SliceStable(running, func(a, b int) bool {
		if running[a].Priority != running[b].Priority {
			return running[a].Priority < running[b].Priority
		}
		return running[b].Stime.Before(running[a].Stime)
	})
	free := core.Amounts{}
	byJob := map[*core.Job][]core.Chunk{}
	var order []*core.Job
	for _, r := range running {
		for _, node := range givable(r, shrunk[r]) {
			for _, c := range r.Where {
				if c.Node == node {
					free.AddTimes(c.Chunk.Amounts, 1)
					byJob[r] = append(byJob[r], c)
				}
			}
			if len(byJob[r]) > 0 && (len(order) == 0 || order[len(order)-1] != r) {
				order = append(order, r)
			}
			if free.Fits(j.Totals) {
				break
			}
		}
		if free.Fits(j.Totals) {
			break
		}
	}
	if !free.Fits(j.Totals) {
		return false
	}
	st := cx.Settings
	for _, r := range order {
		plan.Shrink(r, byJob[r], st.ShrinkGrace, st.ShrinkImmediate)
		shrunk[r] += len(byJob[r])
	}
	return true
}

// givable lists the nodes a running elastic job could give back, the
// last it grew onto first: nodes other than its first whose chunks of the
// job are all of its range, as long as it keeps its minimum (taken
// counts the chunks already being taken back this cycle).
func givable(r *core.Job, taken int) []string {
	alloc, ok := r.Select.WithNodeCount(len(r.Where))
	ei := r.Select.Elastic()
	if !ok || ei < 0 {
		return nil
	}
	start := 0
	for i := 0; i < ei; i++ {
		start += alloc[i].Count
	}
	end := start + alloc[ei].Count
	extra := alloc[ei].Count - r.Select[ei].Count - taken
	var out []string
	for k := end - 1; k >= start && extra > 0; k-- {
		node := r.Where[k].Node
		if node == r.Where[0].Node || slices.Contains(out, node) {
			continue
		}
		n, inRange := 0, true
		for m, c := range r.Where {
			if c.Node == node {
				n++
				inRange = inRange && m >= start && m < end
			}
		}
		if !inRange || n > extra {
			continue
		}
		out = append(out, node)
		extra -= n
	}
	return out
}

// share gives what is free now to the running elastic jobs below their
// maximum (balanced mode, after the queued jobs had their minimum): a
// chunk at a time in rounds, each job as many per round as its priority
// band's weight (priority_bias none: 1 each; medium: each band twice the
// next lower one's; high: ten times).
func (p *Pipeline) share(cx *Context, plan *core.Plan, now time.Time) {
	jobs := elasticRunning(cx.World)
	if len(jobs) == 0 {
		return
	}
	factor := map[string]int{"medium": 2, "high": 10}[cx.Settings.PriorityBias]
	weight := map[*core.Job]int{}
	band, w := jobs[len(jobs)-1].Priority, 1
	for k := len(jobs) - 1; k >= 0; k-- {
		if jobs[k].Priority != band && factor > 0 {
			band, w = jobs[k].Priority, w*factor
		}
		weight[jobs[k]] = w
	}
	added := map[*core.Job][]core.Chunk{}
	for progress := true; progress; {
		progress = false
		for _, j := range jobs {
			for n := 0; n < weight[j]; n++ {
				if len(j.Where)+len(added[j]) >= j.Select.MaxNodeCount() {
					break
				}
				cands := growCandidates(cx.World, j)
				if cands != nil {
					// Nor onto a node it was just given, under scatter.
					cands = slices.DeleteFunc(slices.Clone(cands), func(nd *core.Node) bool {
						return slices.ContainsFunc(added[j], func(c core.Chunk) bool { return c.Node == nd.Name })
					})
				}
				if !cx.limitsAllow(j, j.At(len(j.Where)+len(added[j])+1)) {
					break
				}
				where, ok := cx.Cal.PlaceAt(growth(j, 1, now), now, cands, false)
				if !ok {
					break
				}
				cx.Cal.Start(growth(j, 1, now), where)
				added[j] = append(added[j], where...)
				cx.resized(j, len(j.Where)+len(added[j]))
				progress = true
			}
		}
	}
	for _, j := range jobs {
		if len(added[j]) == 0 {
			continue
		}
		if s := p.activate(cx, Candidate{Job: j, Where: added[j], Running: true}); !s.IsRun() {
			continue // left to others next cycle
		}
		plan.Grow(j, added[j])
	}
}
