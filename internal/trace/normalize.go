package trace

import (
	"cmp"
	"errors"
	"slices"
)

// Normalize applies the replay conventions of the reference traces
// (../shared/traces/README.md) to w, in place: the machine has procs
// processors when procs > 0, else w.MaxProcs, and w.MaxProcs becomes that
// size. Each job's Procs becomes the processors to replay (ReqProcs, or
// Procs when no request is known) and its ReqTime the walltime to replay
// (the request raised to the run time when the job ran longer, the run
// time when no request is known). Jobs with a run time < 0, no processor
// count, more processors than the machine, or a submit time < 0 (unknown;
// not a README rule, and no reference trace has one) are removed and
// counted in w.Dropped. The rest is sorted by submit time, ties keeping
// their order. Normalize fails only when the machine size is unknown.
func Normalize(w *Workload, procs int) error {
	if procs <= 0 {
		procs = w.MaxProcs
	}
	if procs <= 0 {
		return errors.New("trace: machine size unknown (no MaxProcs header): give the number of processors")
	}
	w.MaxProcs = procs
	kept := w.Jobs[:0]
	for _, j := range w.Jobs {
		p := j.ReqProcs
		if p <= 0 {
			p = j.Procs
		}
		if j.Run < 0 || p <= 0 || p > procs || j.Submit < 0 {
			w.Dropped++
			continue
		}
		j.Procs = p
		j.ReqTime = max(j.ReqTime, j.Run)
		kept = append(kept, j)
	}
	clear(w.Jobs[len(kept):]) // let the dropped jobs' strings go
	w.Jobs = kept
	if !slices.IsSortedFunc(w.Jobs, bySubmit) {
		slices.SortStableFunc(w.Jobs, bySubmit)
	}
	return nil
}

func bySubmit(x, y Job) int { return cmp.Compare(x.Submit, y.Submit) }
