package fifo

// Preemption as OpenPBS does it (sched_config's preemptive_sched,
// preempt_queue_prio, preempt_prio, preempt_order, preempt_sort): every
// job has a rank, its level in preempt_prio (express_queue: its queue's
// priority is at least preempt_queue_prio; starving_jobs; fairshare: its
// entity is over its share; queue_softlimits, server_softlimits: its
// user or group is over the queue's or the server's max_user_run_soft
// or max_group_run_soft; normal_jobs: none of these), jobs of express
// levels ranked among themselves by their queues' priorities. A job that
// finds no room may take it from running jobs of a strictly lower rank,
// never of an equal or higher one, so two jobs can never preempt each
// other in turn. A job held back by a run limit preempts the fewest such
// jobs counting toward that limit first (preemptForLimits). Victims are
// taken lowest rank first and, within a rank, the last started first
// (preempt_sort min_time_since_start), until the job fits; then each victim not needed after all is given back. Each is
// preempted by the first method of preempt_order (for the walltime it
// has left) that applies to it: S suspend always, C checkpoint unless
// its Checkpoint attribute is n (the server skips it where the job's mom
// has no checkpoint action), R requeue for rerunnable jobs only. Jobs are
// tried by rank first; a job suspended by preemption comes before the
// queued jobs of its rank and resumes as soon as its own chunks are free.

import (
	"slices"
	"time"

	"github.com/gopbs/gopbs/sched/core"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// Preemption is the preemption settings in force (Settings.Preempt; nil
// when preemptive_sched is off).
type Preemption struct {
	QueuePrio int64
	Prio      schedpriv.PreemptPrio
	Order     schedpriv.PreemptOrder
}

// rank is a job's preemption rank: its level (an index in preempt_prio,
// lower is higher; len for below every level) and, at an express level,
// its queue's priority.
type rank struct {
	level int
	qprio int64
}

// above reports whether a outranks b.
func (a rank) above(b rank) bool {
	if a.level != b.level {
		return a.level < b.level
	}
	return a.qprio > b.qprio
}

// preemptState is a cycle's preemption: the ranks worked out, the jobs
// preempted so far.
type preemptState struct {
	cfg    *Preemption
	ranks  map[*core.Job]rank
	chosen map[*core.Job]bool
}

// preempting returns the cycle's preemption state, nil when preemption
// is off.
func (cx *Context) preempting() *preemptState {
	if cx.Settings.Preempt == nil {
		return nil
	}
	if cx.pre == nil {
		cx.pre = &preemptState{cfg: cx.Settings.Preempt, ranks: map[*core.Job]rank{}, chosen: map[*core.Job]bool{}}
	}
	return cx.pre
}

// rankOf is j's preemption rank.
func (ps *preemptState) rankOf(cx *Context, j *core.Job) rank {
	if r, ok := ps.ranks[j]; ok {
		return r
	}
	var has schedpriv.PreemptClass
	q := cx.World.Queue(j.Queue)
	if q != nil && q.Priority >= ps.cfg.QueuePrio {
		has |= schedpriv.PreemptExpress
	}
	st := cx.Settings
	if j.Queued() && st.HelpStarving && st.MaxStarve > 0 && cx.World.Now.Sub(j.Qtime) > st.MaxStarve {
		has |= schedpriv.PreemptStarving
	}
	if s := cx.Inputs.Standing; s != nil && s.Factor(s.Group(j.Owner)) < 1 {
		has |= schedpriv.PreemptFairshare // used more than its share
	}
	if q != nil && cx.overSoft(q.Soft, j, j.Queue) {
		has |= schedpriv.PreemptQueueSoft
	}
	if cx.overSoft(cx.World.Server.Soft, j, "") {
		has |= schedpriv.PreemptServerSoft
	}
	r := rank{level: ps.cfg.Prio.Level(has)}
	if r.level < len(ps.cfg.Prio) && ps.cfg.Prio[r.level]&schedpriv.PreemptExpress != 0 && q != nil {
		r.qprio = q.Priority
	}
	ps.ranks[j] = r
	return r
}

// overSoft reports whether j's user or group is over the soft limits l
// in queue ("" the server): running, when their running jobs there
// number more than the limit; queued, when starting it would make them.
// Every job of an entity over a limit is over it (OpenPBS's rule): the
// last started of them goes first (preempt_sort).
func (cx *Context) overSoft(l core.SoftLimits, j *core.Job, queue string) bool {
	if !l.Set() {
		return false
	}
	_, user, group := cx.Running(queue, j.Owner, j.Group)
	if !j.Running() {
		user, group = user+1, group+1
	}
	if l.MaxUserRun > 0 && user > l.MaxUserRun || l.MaxGroupRun > 0 && group > l.MaxGroupRun {
		return true
	}
	if kind, _, _ := cx.resOver(l.Res, j, queue); kind != "" {
		return true
	}
	return cx.entityOver(l.Ent, j, queue) != ""
}

// softLimited reports whether any soft limit is set: then a job started
// changes other jobs' ranks.
func softLimited(w *core.World) bool {
	if w.Server.Soft.Set() {
		return true
	}
	for _, q := range w.Queues {
		if q.Soft.Set() {
			return true
		}
	}
	return false
}

// hasReleased reports whether w has jobs suspended by preemption.
func hasReleased(w *core.World) bool {
	for _, j := range w.Jobs {
		if w.Ordered && j.Queued() {
			break // the rest are queued too
		}
		if j.Released {
			return true
		}
	}
	return false
}

// withReleased adds the world's jobs suspended by preemption to the jobs
// to try, which they come before: with preemption on, all in rank order,
// highest first, a suspended job before the queued jobs of its rank (the
// rest keeping order's order); with it off (turned off while jobs were
// suspended), the suspended jobs first, so that they resume.
func (cx *Context) withReleased(order []*core.Job) []*core.Job {
	ps := cx.preempting()
	if ps == nil && !hasReleased(cx.World) {
		return order
	}
	var out []*core.Job
	for _, j := range cx.World.Jobs {
		if cx.World.Ordered && j.Queued() {
			break
		}
		if j.Released {
			out = append(out, j)
		}
	}
	out = append(out, order...)
	if ps == nil {
		return out
	}
	slices.SortStableFunc(out, func(a, b *core.Job) int {
		ra, rb := ps.rankOf(cx, a), ps.rankOf(cx, b)
		switch {
		case ra.above(rb):
			return -1
		case rb.above(ra):
			return 1
		}
		return 0
	})
	return out
}

// resume resumes j, suspended by preemption, when the chunks it had are
// free for the walltime it has left and no run limit holds it back; else it stays suspended, its comment
// (why it was preempted) as it is.
func (p *Pipeline) resume(cx *Context, plan *core.Plan, j *core.Job, checks []Check, ignoreBlocks bool) {
	if !cx.Cal.Resumable(j, ignoreBlocks) {
		return
	}
	// Nor while it would put its user, group or queue over a run limit
	// (it may have been preempted to lift one).
	for _, c := range checks {
		if s := c.Check(cx, j); !s.IsRun() && runLimit(core.Status{Code: s.Code, Plugin: c.Name()}) {
			return
		}
	}
	plan.Resume(j)
	cx.Cal.Resume(j)
	cx.startCounted(j)
}

// methods are the preemption methods that apply to running job v, in
// preempt_order's order for the walltime it has left ("" for none).
func (ps *preemptState) methods(v *core.Job, now time.Time) string {
	left := 100
	if v.Walltime > 0 {
		used := v.UsedWall
		if used <= 0 && !v.Stime.IsZero() {
			used = now.Sub(v.Stime)
		}
		left = int(100 - float64(used)/float64(v.Walltime)*100)
		if left < 0 {
			left = 1 // past its walltime
		}
	}
	all := ps.cfg.Order.Methods(left)
	out := make([]byte, 0, len(all))
	for i := 0; i < len(all); i++ {
		switch m := schedpriv.PreemptMethod(all[i]); {
		case m == schedpriv.PreemptRequeue && !v.Rerunable:
		case m == schedpriv.PreemptCheckpoint && v.NoCheckpoint:
		default:
			out = append(out, all[i])
		}
	}
	return string(out)
}

// preemptFor tries to make room for j, the index-th job tried this cycle,
// which did not fit now (on nodes, nil for any), by preempting running
// jobs of a lower rank. forced are victims already chosen for j's run
// limits (preemptForLimits; out of the counts already): they are
// preempted with j's start whatever the room needs. It reports whether it
// dealt with j: j starts on the room made (Preempt decisions for its
// victims, then its Run), or it waits for jobs already leaving their
// nodes, whose room is enough.
func (p *Pipeline) preemptFor(cx *Context, plan *core.Plan, j *core.Job, index int, nodes []*core.Node, ignoreBlocks bool, forced []*core.Job) bool {
	ps := cx.preempting()
	if ps == nil {
		return false
	}
	w, now := cx.World, cx.World.Now
	jr := ps.rankOf(cx, j)
	var victims, leaving []*core.Job
	for _, r := range w.Jobs {
		if w.Ordered && r.Queued() {
			break // the rest are queued too
		}
		switch {
		case !r.Running() || len(r.Where) == 0 || ps.chosen[r] || slices.Contains(forced, r):
		case r.Ending || r.State == core.JobExiting:
			leaving = append(leaving, r)
		case r.State == core.JobRunning && jr.above(ps.rankOf(cx, r)) && ps.methods(r, now) != "":
			victims = append(victims, r)
		}
	}
	if len(victims) == 0 && len(leaving) == 0 && len(forced) == 0 {
		return false
	}
	ps.byVictimOrder(cx, victims)
	var released []*core.Job
	undo := func() {
		for _, r := range released {
			cx.Cal.Restore(r)
		}
		released = released[:0]
	}
	// jrun is j as it would run (a shrink-to-fit job with its walltime
	// chosen: stf.go).
	jrun := j
	var until time.Time
	if ignoreBlocks && cx.Inputs.Dedicated != nil {
		until = cx.Inputs.Dedicated.To
	}
	fits := func() ([]core.Chunk, bool) {
		var where []core.Chunk
		var ok bool
		jrun, where, ok = placeNow(cx.Cal, j, nodes, ignoreBlocks, until)
		return where, ok
	}
	// What jobs already leaving hold comes free without anyone
	// preempted: when that is enough, j waits for it.
	if len(forced) == 0 {
		for _, r := range leaving {
			if cx.Cal.Release(r) {
				released = append(released, r)
			}
		}
		if _, ok := fits(); ok && len(released) > 0 {
			undo()
			plan.Comment(j, core.CommentPreemptWait)
			return true
		}
		undo()
	}
	for _, v := range forced {
		if cx.Cal.Release(v) {
			released = append(released, v)
		}
	}
	mustGo := len(released) // the forced ones, never given back
	_, ok := fits()
	for _, v := range victims {
		if ok {
			break
		}
		if !cx.Cal.Release(v) {
			continue
		}
		released = append(released, v)
		_, ok = fits()
	}
	if !ok {
		undo()
		return false
	}
	// Victims not needed after all, the highest ranked first, are given
	// back.
	for k := len(released) - 1; k >= mustGo; k-- {
		v := released[k]
		cx.Cal.Restore(v)
		if _, still := fits(); still {
			released = slices.Delete(released, k, k+1)
			continue
		}
		cx.Cal.Release(v)
	}
	where, _ := fits()
	// Dealt with, but not started: nobody is preempted after all.
	notStarted := func(comment string) bool {
		undo()
		cx.recount(forced)
		plan.Comment(j, comment)
		return true
	}
	if why := resources(cx, j); why != "" {
		return notStarted(notRunning + why)
	}
	if s := p.activate(cx, Candidate{Job: j, Where: where, Index: index}); !s.IsRun() {
		return notStarted(s.Comment())
	}
	preempted := released
	for _, v := range forced {
		if !slices.Contains(preempted, v) {
			preempted = append(preempted, v) // held nothing on the calendar
		}
	}
	for _, v := range preempted {
		ps.chosen[v] = true
		plan.Preempt(v, ps.methods(v, now), j)
		if !slices.Contains(forced, v) {
			cx.stopCounted(v)
		}
	}
	plan.RunFor(j, where, "Job started on "+now.Format("Mon Jan 02 at 15:04")+" by preempting "+victimList(preempted), false, stfWalltime(j, jrun))
	cx.Cal.Start(jrun, where)
	cx.startCounted(j)
	return true
}

// byVictimOrder sorts victims as they are taken: the lowest rank first;
// within a rank the last started first.
func (ps *preemptState) byVictimOrder(cx *Context, victims []*core.Job) {
	slices.SortStableFunc(victims, func(a, b *core.Job) int {
		ra, rb := ps.rankOf(cx, a), ps.rankOf(cx, b)
		switch {
		case ra.above(rb):
			return 1
		case rb.above(ra):
			return -1
		}
		return b.Stime.Compare(a.Stime)
	})
}

// runLimit reports whether s is a run limit's refusal (the server's or
// the queue's max_running, max_user_run, max_group_run), which
// preemption may lift.
func runLimit(s core.Status) bool {
	return s.Code == core.NotNow && (s.Plugin == serverLimits{}.Name() || s.Plugin == queueLimits{}.Name())
}

// preemptForLimits tries to bring j, held back by a run limit, under its
// limits by preempting running jobs of a lower rank that count toward
// them (as OpenPBS does): the fewest, taken in victim order, that lift
// every limit and leave every other check passing; then preemptFor makes
// the room j needs on the nodes. It reports whether j started (or waits,
// as preemptFor says); else the counts are as they were.
func (p *Pipeline) preemptForLimits(cx *Context, plan *core.Plan, j *core.Job, index int, checks []Check, nodes []*core.Node, ignoreBlocks bool) bool {
	ps := cx.preempting()
	w, now := cx.World, cx.World.Now
	jr := ps.rankOf(cx, j)
	var candidates []*core.Job
	for _, r := range w.Jobs {
		if w.Ordered && r.Queued() {
			break
		}
		if r.State == core.JobRunning && !r.Ending && len(r.Where) > 0 && !ps.chosen[r] &&
			jr.above(ps.rankOf(cx, r)) && ps.methods(r, now) != "" {
			candidates = append(candidates, r)
		}
	}
	ps.byVictimOrder(cx, candidates)
	var chosen []*core.Job
	taken := map[*core.Job]bool{}
	lifted := false
	// Taken in victim order, as long as one counts toward a limit j is
	// at; a pass that lifts one limit may bring j to another, so the
	// candidates are gone over again until nothing more is taken.
	for more := true; more && !lifted; {
		more = false
		for _, v := range candidates {
			if taken[v] || !countsToward(cx, j, v) {
				continue
			}
			cx.stopCounted(v)
			chosen = append(chosen, v)
			taken[v], more = true, true
			s := p.check(cx, checks, j)
			if s.IsRun() {
				lifted = true
				break
			}
			if !runLimit(s) {
				more = false // held back by something preemption does not lift
				break
			}
		}
	}
	if lifted {
		// Victims not needed after all, the highest ranked first,
		// are given back.
		for k := len(chosen) - 1; k >= 0; k-- {
			cx.startCounted(chosen[k])
			if p.check(cx, checks, j).IsRun() {
				chosen = slices.Delete(chosen, k, k+1)
				continue
			}
			cx.stopCounted(chosen[k])
		}
		if p.preemptFor(cx, plan, j, index, nodes, ignoreBlocks, chosen) {
			return true
		}
	}
	cx.recount(chosen)
	return false
}

// countsToward reports whether running job v counts toward a run limit
// that j is at: preempting it brings j closer to running.
func countsToward(cx *Context, j, v *core.Job) bool {
	at := func(l core.Limits, rl core.ResLimits, ent core.EntityLimits, queue string) bool {
		if queue != "" && v.Queue != queue {
			return false
		}
		if why, e := cx.entityBreach(ent, j, queue); why != "" && sharesEntity(v, e) {
			return true
		}
		total, user, group := cx.Running(queue, j.Owner, j.Group)
		if l.MaxRunning >= 0 && total >= l.MaxRunning ||
			l.MaxUserRun >= 0 && user >= l.MaxUserRun && v.Owner == j.Owner ||
			l.MaxGroupRun >= 0 && group >= l.MaxGroupRun && v.Group == j.Group {
			return true
		}
		kind, _, r := cx.resOver(rl, j, queue)
		holds, _ := v.RequestNumber(r)
		return kind == "user" && v.Owner == j.Owner && holds > 0 || kind == "group" && v.Group == j.Group && holds > 0
	}
	if at(cx.World.Server.Limits, cx.World.Server.ResLimits, cx.World.Server.Ent, "") {
		return true
	}
	q := cx.World.Queue(j.Queue)
	return q != nil && at(q.Limits, q.ResLimits, q.Ent, j.Queue)
}

// victimList names the jobs preempted for a start, for its comment.
func victimList(vs []*core.Job) string {
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += ", "
		}
		out += v.ID
	}
	return out
}
