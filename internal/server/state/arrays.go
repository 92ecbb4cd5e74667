package state

import "github.com/gopbs/gopbs/internal/model"

// arrayCount keeps the counts of subjob j's array as j enters (d = 1) or
// leaves (d = -1) its state.
func (t *Jobs) arrayCount(j *model.Job, d int) {
	if !j.IsSubjob {
		return
	}
	p, ok := t.Top(j.Seq)
	if !ok || p.Array == nil {
		return
	}
	a := p.Array
	switch j.State {
	case model.StateRunning:
		a.Running += d
	case model.StateExiting:
		a.Exiting += d
	case model.StateFinished:
		// Counted as Expired when its end is recorded (EndSubjob).
	default:
		if d > 0 {
			a.Queued = a.Queued.Add(j.Index)
		} else {
			a.Queued = a.Queued.Remove(j.Index)
		}
	}
	t.counts.touch(p) // its counts are shown, and schedulers read its queued indices
}

// Ended is what is kept of subjob index of array seq once it finished.
func (t *Jobs) Ended(seq int64, index int) (*model.SubjobEnd, bool) {
	e, ok := t.ended[seq][index]
	return e, ok
}

// Ends are the kept ends of array seq's finished subjobs, in no order.
func (t *Jobs) Ends(seq int64) []*model.SubjobEnd {
	ends := make([]*model.SubjobEnd, 0, len(t.ended[seq]))
	for _, e := range t.ended[seq] {
		ends = append(ends, e)
	}
	return ends
}

// EndSubjob keeps e, the end of a subjob of array p (in the table), and
// counts it as expired. The subjob, if it was a job of its own, is
// removed first (Remove).
func (t *Jobs) EndSubjob(p *model.Job, e *model.SubjobEnd) {
	m := t.ended[p.Seq]
	if m == nil {
		m = map[int]*model.SubjobEnd{}
		t.ended[p.Seq] = m
	}
	m[e.Index] = e
	p.Array.Expired++
	t.counts.touch(p)
}

// SubjobAt is subjob index of array p as it stands: its own job (live),
// what is kept of it once finished (shown as X), or made from p while it
// waits in p's queued indices, with ids of server; ok is false when p has
// no such index. Only a live subjob may be changed; the others are
// views.
func (t *Jobs) SubjobAt(p *model.Job, index int, server string, now int64) (j *model.Job, live, ok bool) {
	if j, ok := t.Get(model.JobKey{Seq: p.Seq, Index: index}); ok {
		return j, true, true
	}
	if e, ok := t.Ended(p.Seq, index); ok {
		return p.EndedSubjob(e, server), false, true
	}
	if p.Array.Deleted.Contains(index) {
		return p.EndedSubjob(model.DeletedEnd(index, p.Obittime), server), false, true
	}
	if p.Array.Queued.Contains(index) {
		return p.Subjob(index, server, now), false, true
	}
	return nil, false, false
}

// Waiting reports whether subjob index of array p waits in its queued
// indices with nothing of its own (no record: it is made when it starts).
func (t *Jobs) Waiting(p *model.Job, index int) bool {
	if !p.Array.Queued.Contains(index) {
		return false
	}
	_, live := t.Get(model.JobKey{Seq: p.Seq, Index: index})
	return !live
}

// NextWaiting is the first subjob of p that is Waiting.
func (t *Jobs) NextWaiting(p *model.Job) (int, bool) {
	found, index := false, 0
	p.Array.Queued.Each(func(i int) bool {
		if t.Waiting(p, i) {
			found, index = true, i
			return false
		}
		return true
	})
	return index, found
}
