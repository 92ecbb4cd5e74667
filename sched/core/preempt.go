package core

import (
	"slices"
	"time"

	"github.com/gopbs/gopbs/resc"
)

// Preemption on the calendar: a running job taken off what it holds (it
// is suspended, requeued or checkpointed for a job of a higher rank), the
// hold put back when the preemption is not made after all, and a job
// suspended by preemption resumed on the very chunks it had.

// Release takes running job j's hold off the calendar: what it holds on
// its nodes is free from now on. It reports false when j holds nothing
// here (not running, or no span of its own: a world that does not list
// it).
func (c *Calendar) Release(j *Job) bool {
	if !j.Running() || len(j.Where) == 0 {
		return false
	}
	c.addDeferred() // its spans exist before one is taken off
	end := c.expectedEnd(j)
	done := false
	c.eachHeld(j, func(cn *calNode, amt Amounts) {
		if c.removeSpan(cn, c.now, end, amt) {
			done = true
		}
	})
	c.endsDirty = true
	return done
}

// Restore puts back the hold Release took off: j holds its chunks from
// now until its expected end again.
func (c *Calendar) Restore(j *Job) {
	end := c.expectedEnd(j)
	c.eachHeld(j, func(cn *calNode, amt Amounts) {
		c.addSpan(cn.node.Name, span{from: c.now, to: end, amt: amt})
	})
}

// eachHeld calls f with every node j holds and what it holds there: its
// chunks' amounts, one call per chunk; for a job placed exclusively the
// whole of each node (for exclhost each node of its hosts), once per
// node.
func (c *Calendar) eachHeld(j *Job, f func(cn *calNode, amt Amounts)) {
	if !j.Place.Exclusive() {
		for _, ch := range j.Where {
			if cn := c.node(ch.Node); cn != nil {
				f(cn, ch.Amounts())
			}
		}
		return
	}
	var seen []*calNode
	for _, ch := range j.Where {
		cn := c.node(ch.Node)
		if cn == nil {
			continue
		}
		nodes := []*calNode{cn}
		if j.Place.Sharing == resc.SharingExclHost {
			nodes = c.hosts()[cn.host]
		}
		for _, n := range nodes {
			if !slices.Contains(seen, n) {
				seen = append(seen, n)
				f(n, n.cap)
			}
		}
	}
}

// removeSpan takes one span of cn from from to to holding amt off, and
// everything that was worked out from it. It reports false when cn has
// no such span.
func (c *Calendar) removeSpan(cn *calNode, from, to int64, amt Amounts) bool {
	k := slices.IndexFunc(cn.spans, func(s span) bool { return s.from == from && s.to == to && sameAmounts(s.amt, amt) })
	if k < 0 {
		return false
	}
	cn.spans = slices.Delete(cn.spans, k, k+1)
	cn.starts = cn.starts[:0]
	for i, s := range cn.spans {
		if s.from > c.now {
			cn.starts = append(cn.starts, i)
		}
	}
	for _, u := range cn.usage {
		c.spare = append(c.spare, u)
	}
	clear(cn.usage)
	cn.freeFor = freeKey{}
	if from <= c.now && to > c.now {
		for r, v := range amt {
			cn.freeNow[r] += v
			if !c.totalIsNode {
				c.freeTotal[r] += v
			}
		}
	}
	c.cursor = 0 // what is free before the next fit may fit now
	return true
}

// sameAmounts reports whether a and b hold the same amounts.
func sameAmounts(a, b Amounts) bool {
	if len(a) != len(b) {
		return false
	}
	for r, v := range a {
		if w, ok := b[r]; !ok || w != v {
			return false
		}
	}
	return true
}

// ResumeEnd is when job j, suspended by preemption, would end if it
// resumed now: now plus the walltime it has left (its walltime less the
// walltime it used), at least a second; its queue's or the server's
// resources_max.walltime stand for a walltime it did not ask for, and
// Forever for none.
func (c *Calendar) ResumeEnd(j *Job) time.Time {
	wall := c.wallOf(j)
	if wall <= 0 {
		return Forever
	}
	left := max(wall-j.UsedWall, time.Second)
	return time.Unix(c.now+int64(left/time.Second), 0)
}

// Resumable reports whether j, suspended by preemption, fits again on the
// chunks it had (Where) from now until ResumeEnd: every node it had is up
// and has free what j's chunks there take (placed exclusively, nothing of
// the node, or of its host, is held), and the time overlaps no blocked
// window unless ignoreBlocks.
func (c *Calendar) Resumable(j *Job, ignoreBlocks bool) bool {
	if len(j.Where) == 0 {
		return false
	}
	to := c.ResumeEnd(j).Unix()
	if !ignoreBlocks && c.blocked(c.now, to) {
		return false
	}
	need := map[*calNode]Amounts{}
	fits := true
	for _, ch := range j.Where {
		cn := c.node(ch.Node)
		if cn == nil {
			return false // down, or gone
		}
		if need[cn] == nil {
			need[cn] = Amounts{}
		}
		need[cn].AddTimes(ch.Amounts(), 1)
	}
	c.eachHeld(j, func(cn *calNode, amt Amounts) {
		if j.Place.Exclusive() {
			// The whole node: nothing else may hold any of it.
			need[cn] = amt
		}
	})
	for cn, want := range need {
		free := c.freeOver(cn, c.now, to)
		for r, v := range want {
			if free[r] < v {
				fits = false
			}
		}
	}
	return fits
}

// Resume records that j, suspended by preemption, holds its chunks again
// from now until ResumeEnd.
func (c *Calendar) Resume(j *Job) {
	to := c.ResumeEnd(j).Unix()
	c.eachHeld(j, func(cn *calNode, amt Amounts) {
		c.addSpan(cn.node.Name, span{from: c.now, to: to, amt: amt})
	})
}
