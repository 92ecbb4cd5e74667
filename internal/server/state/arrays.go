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
