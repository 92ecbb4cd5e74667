package core

import (
	"slices"
	"time"
)

// Shrink-to-fit jobs (Job.ShrinkToFit): a job with a min_walltime and a
// max_walltime and no walltime starts with the longest walltime between
// the two that lets it end before the next hold on the nodes it gets (a
// reservation, dedicated time, a top job's planned start).

// DefaultMaxWalltime bounds a shrink-to-fit job that names no
// max_walltime and whose queue and server set no resources_max.walltime
// (OpenPBS's default max_walltime: 5 years).
const DefaultMaxWalltime = 5 * 365 * 24 * time.Hour

// ChooseWalltime is the longest walltime in [lo, hi] for which fits holds,
// and false when fits(lo) does not. fits must hold for every walltime up
// to some length and for none beyond it, and change only just past the
// walltimes of cuts (those that end a job exactly where a hold begins):
// the answer is then hi or one of cuts, found in a few calls of fits.
// Walltimes are whole seconds (lo and hi are rounded down to them).
func ChooseWalltime(lo, hi time.Duration, cuts []time.Duration, fits func(time.Duration) bool) (time.Duration, bool) {
	lo, hi = lo.Truncate(time.Second), hi.Truncate(time.Second)
	if lo <= 0 {
		lo = time.Second
	}
	if hi < lo || !fits(lo) {
		return 0, false
	}
	cand := []time.Duration{lo}
	for _, c := range cuts {
		if c = c.Truncate(time.Second); c > lo && c < hi {
			cand = append(cand, c)
		}
	}
	cand = append(cand, hi)
	slices.Sort(cand)
	cand = slices.Compact(cand)
	// fits(cand[0]) holds: the last candidate that fits, by halving.
	ok, bad := 0, len(cand)
	for bad-ok > 1 {
		mid := (ok + bad) / 2
		if fits(cand[mid]) {
			ok = mid
		} else {
			bad = mid
		}
	}
	return cand[ok], true
}

// Bounds is the range a shrink-to-fit job's walltime is chosen in now:
// from its min_walltime to its max_walltime, else its queue's or the
// server's resources_max.walltime, else DefaultMaxWalltime; never past
// until when it is not zero (the end of the dedicated time a job runs
// in).
func (c *Calendar) Bounds(j *Job, until time.Time) (lo, hi time.Duration) {
	lo, hi = j.MinWalltime, j.MaxWalltime
	if m := c.world.MaxWalltime(j.Queue); m > 0 && (hi <= 0 || m < hi) {
		hi = m
	}
	if hi <= 0 {
		hi = DefaultMaxWalltime
	}
	if !until.IsZero() {
		hi = min(hi, until.Sub(c.Now()))
	}
	return lo, hi
}

// FitWalltime places the shrink-to-fit job j now for the longest walltime
// in [lo, hi] that it fits for (PlaceAt, with order and ignoreBlocks as
// there): it reports that walltime and where, or false when j does not
// fit now even for lo.
func (c *Calendar) FitWalltime(j *Job, lo, hi time.Duration, order []*Node, ignoreBlocks bool) (time.Duration, []Chunk, bool) {
	try := *j
	var where []Chunk
	fits := func(d time.Duration) bool {
		try.Walltime = d
		w, ok := c.PlaceAt(&try, c.Now(), order, ignoreBlocks)
		if ok {
			where = w
		}
		return ok
	}
	wall, ok := ChooseWalltime(lo, hi, c.cuts(lo, hi, ignoreBlocks), fits)
	if !ok {
		return 0, nil, false
	}
	if try.Walltime != wall {
		fits(wall) // the last try was a longer one that did not fit
	}
	return wall, where, true
}

// cuts are the walltimes in (lo, hi) of a job started now that end it
// where a hold begins: a span that starts after now (a reservation, a
// job reserved to start later) or, unless ignoreBlocks, a blocked window.
func (c *Calendar) cuts(lo, hi time.Duration, ignoreBlocks bool) []time.Duration {
	from, to := c.now+int64(lo/time.Second), c.now+int64(hi/time.Second)
	var out []time.Duration
	add := func(t int64) {
		if t > from && t < to {
			out = append(out, time.Duration(t-c.now)*time.Second)
		}
	}
	for _, i := range c.future {
		cn := c.nodes[i]
		for _, k := range cn.starts {
			add(cn.spans[k].from)
		}
	}
	if !ignoreBlocks {
		for _, b := range c.blocks {
			add(b.from)
		}
	}
	return out
}
