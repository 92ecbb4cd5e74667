package fifo

import (
	"time"

	"github.com/gopbs/gopbs/sched/core"
)

// The job stages (cycle.go's jobStages), in the order a job meets them.

type resumeStage struct{}

func (resumeStage) Name() string { return "resume" }

// A job suspended by preemption resumes where it was, or waits.
func (resumeStage) try(c *cycle, a *attempt) verdict {
	if !a.j.Released {
		return pass
	}
	c.p.resume(c.cx, c.plan, a.j, c.checks, c.isDed(a.j.Queue) && c.cx.inDedicated)
	return decided
}

type gateStage struct{}

func (gateStage) Name() string { return "gate" }

// The job waits behind a strict-fifo stop of its scope, an activation's
// block, or the backfill lookahead (backfill_depth).
func (gateStage) try(c *cycle, a *attempt) verdict {
	j, st := a.j, c.st
	if st.ByQueue {
		a.scope = j.Queue
	}
	if c.stopped(a.scope) {
		if c.w.NoComments && !st.ByQueue {
			return endCycle // every job after it is in the scope stopped
		}
		c.plan.Comment(j, notRunning+cStrictFIFO)
		return decided
	}
	if c.blocker != nil && j.Priority <= c.blocker.Priority {
		c.plan.Comment(j, notRunning+cBlocked+c.blocker.ID)
		return decided
	}
	a.backfilling = c.top != nil
	if a.backfilling {
		c.looked++
		if st.BackfillDepth > 0 && c.looked > st.BackfillDepth {
			waitOrNever(c.plan, j, c.neverRuns, cTopJob)
			return decided
		}
	}
	return pass
}

type checkStage struct{}

func (checkStage) Name() string { return "check" }

func (checkStage) try(c *cycle, a *attempt) verdict {
	j := a.j
	// With nothing to check (as most cycles), no status is copied.
	if len(c.checks) == 0 {
		c.plan.Accrue(c.w, j, false) // no limit holds it back
		return pass
	}
	s := c.p.check(c.cx, c.checks, j)
	// OpenPBS's scheduler tells the server of a job its user's, group's
	// or project's run limit holds back: it is ineligible (accrues no
	// eligible time) until it is not.
	c.plan.Accrue(c.w, j, s.Entity)
	if s.IsRun() {
		return pass
	}
	if c.st.Preempt != nil && runLimit(s) {
		// Preemption may lift the limit: on the nodes the ranking would
		// give it (nil: any).
		var nodes []*core.Node
		ranked := true
		if c.ranking != nil {
			var rs core.Status
			nodes, rs = c.ranking.Rank(c.cx, j)
			ranked = rs.IsRun()
		}
		if ranked && c.p.preemptForLimits(c.cx, c.plan, j, a.index, c.checks, nodes, c.isDed(j.Queue) && c.cx.inDedicated) {
			return decided
		}
	}
	c.plan.Comment(j, s.Comment())
	c.stopIfStrict(a)
	return decided
}

type placeStage struct{}

func (placeStage) Name() string { return "place" }

// placeStage finds where the job would run now: the ranking's nodes (or
// any), the calendar's room on them, the widest start of an elastic job.
// A job whose room is found but whose stage-in is still being copied
// keeps it until the copy is done.
func (placeStage) try(c *cycle, a *attempt) verdict {
	j, w := a.j, c.w
	if a.backfilling && j.Walltime <= 0 && !j.ShrinkToFit() {
		waitOrNever(c.plan, j, c.neverRuns, cNoWalltime)
		return decided
	}
	a.ignoreBlocks = c.isDed(j.Queue) && c.cx.inDedicated
	if c.ranking != nil {
		var s core.Status
		a.nodes, s = c.ranking.Rank(c.cx, j)
		if !s.IsRun() {
			if s.Plugin == "" {
				s.Plugin = c.ranking.Name()
			}
			c.plan.Comment(j, s.Comment())
			return decided
		}
	}
	var until time.Time // a shrink-to-fit job in dedicated time ends by its end
	if a.ignoreBlocks {
		until = c.in.Dedicated.To
	}
	if j.StageNode != "" && (j.StageIn == core.StagedIn || j.StageIn == core.StagingIn) && a.nodes == nil {
		// Where its files are (or are going): a run there skips the copy.
		if n := w.Node(j.StageNode); n != nil {
			a.jr, a.where, a.fits = placeNow(c.cx.Cal, j, []*core.Node{n}, a.ignoreBlocks, until)
		}
	}
	if !a.fits {
		a.jr, a.where, a.fits = placeNow(c.cx.Cal, j, a.nodes, a.ignoreBlocks, until)
	}
	if a.fits && !c.st.Balanced {
		a.where = widest(c.cx, a.jr, c.now, a.nodes, a.ignoreBlocks, a.where)
	}
	if a.fits && j.StageIn == core.StagingIn {
		// Started now, it would copy its files a second time: it keeps
		// what it would take until the copy is done.
		c.cx.Cal.Reserve(a.jr, c.now, a.where)
		c.plan.Comment(j, notRunning+cStagingIn+j.StageNode)
		return decided
	}
	return pass
}

type startStage struct{}

func (startStage) Name() string { return "start" }

// startStage starts a job that fits, when the server's and queues'
// resources allow it and every activation hook says Run.
func (startStage) try(c *cycle, a *attempt) verdict {
	if !a.fits {
		return pass
	}
	j, plan, now := a.j, c.plan, c.now
	if why := resources(c.cx, j); why != "" {
		plan.Comment(j, notRunning+why)
		c.stopIfStrict(a)
		return decided
	}
	if s := c.p.activate(c.cx, Candidate{Job: j, Where: a.where, Backfill: a.backfilling, Index: a.index}); !s.IsRun() {
		switch {
		case s.Code == core.WaitUntil:
			plan.Hold(j, "", s.Until, s.Comment())
		case s.Code == core.Never:
			plan.Fail(j, s.Comment())
		case s.Code == core.Block && !a.backfilling:
			c.blocker = j
			plan.Comment(j, s.Comment())
		case s.Code == core.Keep && !a.backfilling:
			c.cx.Cal.Reserve(a.jr, now, a.where)
			plan.Comment(j, s.Comment())
		default:
			plan.Comment(j, s.Comment())
		}
		return decided
	}
	run := plan.Run
	if a.backfilling {
		run = plan.Backfill
	}
	if a.jr != j {
		// The walltime chosen goes with the start.
		jr, backfilling := a.jr, a.backfilling
		run = func(j *core.Job, where []core.Chunk, comment string) {
			plan.RunFor(j, where, comment, backfilling, jr.Walltime)
		}
	}
	if a.nodes != nil {
		// Placed by the ranking: the comment names the node, and the
		// node's load counts the job for the next ones.
		run(j, a.where, "Job run on node "+a.where[0].Node+" - started on "+now.Format("Mon Jan 02 at 15:04"))
		c.cx.started(j, a.where)
	} else {
		if c.stamp == "" && !c.w.NoComments {
			c.stamp = "Job started on " + now.Format("Mon Jan 02 at 15:04")
		}
		run(j, a.where, c.stamp)
	}
	c.cx.Cal.Start(a.jr, a.where)
	if j.Select.Elastic() >= 0 {
		// Counted as what it starts with (widest), not its minimum.
		j.Numbers = j.At(len(a.where)).Numbers
	}
	c.cx.startCounted(j)
	if j == c.cx.starving {
		c.cx.starving = nil
	}
	return decided
}

type neverStage struct{}

func (neverStage) Name() string { return "never" }

// A job that no node could ever hold fails; a shrink-to-fit job that
// would not fit even for its min_walltime says so.
func (neverStage) try(c *cycle, a *attempt) verdict {
	if failNever(c.plan, a.j, c.neverRuns) {
		return decided
	}
	if minBlocked(c.cx.Cal, a.j, a.nodes, a.ignoreBlocks) {
		c.plan.Comment(a.j, minWalltimeComment(a.j))
		return decided
	}
	return pass
}

type preemptStage struct{}

func (preemptStage) Name() string { return "preempt" }

func (preemptStage) try(c *cycle, a *attempt) verdict {
	if c.st.Preempt != nil && c.p.preemptFor(c.cx, c.plan, a.j, a.index, a.nodes, a.ignoreBlocks, nil) {
		return decided
	}
	return pass
}

type shrinkStage struct{}

func (shrinkStage) Name() string { return "shrink" }

// In balanced mode running elastic jobs give chunks above their minimum
// back for a queued job that finds no room.
func (shrinkStage) try(c *cycle, a *attempt) verdict {
	if c.st.Balanced && !a.backfilling && c.p.shrinkFor(c.cx, c.plan, a.j, c.shrunk) {
		c.plan.Comment(a.j, notRunning+cShrinking)
		return decided
	}
	return pass
}

type reserveStage struct{}

func (reserveStage) Name() string { return "reserve" }

// The job found no room now: the top job (within backfill_depth) takes a
// reservation at its earliest start, a backfill candidate waits for it,
// and under strict fifo without backfilling its scope stops.
func (reserveStage) try(c *cycle, a *attempt) verdict {
	j, plan := a.j, c.plan
	switch {
	case c.tops.take(j):
		c.top = j
		if at, where, ok := c.cx.Cal.Earliest(atMinWalltime(j), c.now, a.ignoreBlocks); ok {
			c.cx.Cal.Reserve(atMinWalltime(j), at, where)
			plan.Reserve(j, at, where)
			if j.StageIn == core.StageInNeeded && len(where) > 0 {
				// The job runs next, where it is expected to: its files
				// are copied meanwhile (the admin guide's early
				// stage-in), not when it starts.
				plan.StageIn(j, where[0].Node)
			}
		}
		plan.Comment(j, notRunning+cNodes)
	case a.backfilling:
		plan.Comment(j, notRunning+cTopJob)
	default:
		plan.Comment(j, notRunning+cNodes)
		if c.st.StrictFIFO {
			c.stop(a.scope, j)
		}
	}
	return decided
}
