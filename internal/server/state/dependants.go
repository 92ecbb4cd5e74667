package state

import (
	"slices"

	"github.com/gopbs/gopbs/internal/model"
)

// dependants is who waits for whom: for a job's sequence number, the
// jobs (by sequence number) with an after form naming it that is not met
// yet. Derived from the jobs, never stored; a job is in it while it is
// unfinished and not a subjob (an array's dependencies are its parent's).
// track and untrack keep it exact at every change of a job.
type dependants map[int64]map[int64]bool

// depend adds j to the index of the jobs it waits for, or takes it out.
func (d dependants) depend(j *model.Job, add bool) {
	if j.IsSubjob || len(j.Depends) == 0 || add && j.Finished() {
		return
	}
	for _, p := range j.Parents() {
		m := d[p]
		if !add {
			delete(m, j.Seq)
			if len(m) == 0 {
				delete(d, p)
			}
			continue
		}
		if m == nil {
			m = map[int64]bool{}
			d[p] = m
		}
		m[j.Seq] = true
	}
}

// Dependants are the jobs waiting for job seq's start or end (an after
// form not yet met names it), by sequence number in order.
func (t *Jobs) Dependants(seq int64) []int64 {
	m := t.deps[seq]
	if len(m) == 0 {
		return nil
	}
	out := make([]int64, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
