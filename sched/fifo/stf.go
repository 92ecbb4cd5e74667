package fifo

import (
	"time"

	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched/core"
)

// Shrink-to-fit jobs (core.Job.ShrinkToFit): placed now for the longest
// walltime between their min_walltime and max_walltime that ends before
// the next hold on the nodes they get, the calendar's reservations,
// dedicated time and top jobs' planned starts (core.Calendar.FitWalltime).
// A job whose min_walltime does not fit before such a hold waits, saying
// so; one that finds no room at all waits as any other, calendared for
// its min_walltime.

// placeNow places j now on nodes (nil: the calendar's order) as PlaceAt
// does. A shrink-to-fit job is placed for the longest walltime that fits,
// never past until when it is not zero (the end of the dedicated time or
// reservation it runs in), and jr is the job as it would run: a copy with
// that walltime, which the calendar is to hold and the start to name. jr
// is j itself for every other job.
func placeNow(cal *core.Calendar, j *core.Job, nodes []*core.Node, ignoreBlocks bool, until time.Time) (jr *core.Job, where []core.Chunk, ok bool) {
	if !j.ShrinkToFit() {
		where, ok = cal.PlaceAt(j, cal.Now(), nodes, ignoreBlocks)
		return j, where, ok
	}
	lo, hi := cal.Bounds(j, until)
	wall, where, ok := cal.FitWalltime(j, lo, hi, nodes, ignoreBlocks)
	if !ok {
		return j, nil, false
	}
	c := *j
	c.Walltime = wall
	return &c, where, true
}

// atMinWalltime is the shrink-to-fit job j as the calendar is to hold it
// while it waits (a top job's planned start): for its min_walltime. Other
// jobs are themselves.
func atMinWalltime(j *core.Job) *core.Job {
	if !j.ShrinkToFit() {
		return j
	}
	c := *j
	c.Walltime = j.MinWalltime
	return &c
}

// minBlocked says whether the shrink-to-fit job j, which does not fit now
// for its min_walltime, would fit for a moment: what keeps it out is a
// hold ahead (a reservation, dedicated time, a top job), not the jobs
// that run now. Its comment then says so (cMinWalltime).
func minBlocked(cal *core.Calendar, j *core.Job, nodes []*core.Node, ignoreBlocks bool) bool {
	if !j.ShrinkToFit() {
		return false
	}
	c := *j
	c.Walltime = time.Second
	_, ok := cal.PlaceAt(&c, cal.Now(), nodes, ignoreBlocks)
	return ok
}

// minWalltimeComment is the comment of a shrink-to-fit job whose
// min_walltime would not end before the next hold on the nodes it could
// have: OpenPBS's comment for a conflict, and the walltime that did not
// fit.
func minWalltimeComment(j *core.Job) string {
	return notRunning + cTopJob + cMinWalltime + resc.FormatDuration(int64(j.MinWalltime/time.Second))
}

// stfWalltime is the walltime a start of j names (core.Decision.Walltime):
// jr's, when jr is the shrink-to-fit j with its walltime chosen; 0 else.
func stfWalltime(j, jr *core.Job) time.Duration {
	if jr == j {
		return 0
	}
	return jr.Walltime
}
