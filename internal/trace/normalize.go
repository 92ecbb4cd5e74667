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
// time when no request is known), an elastic job's MaxProcs is capped at
// the machine. Jobs with a run time < 0, no processor count, more
// processors than the machine (an elastic job: or a minimum above it),
// or a submit time < 0 (unknown;
// not a README rule, and no reference trace has one) are removed and
// counted in w.Dropped. The rest is sorted by submit time, ties keeping
// their order. Normalize fails only when the machine size is unknown.
func Normalize(w *Workload, procs int) error {
	procs, err := machineSize(procs, w.MaxProcs)
	if err != nil {
		return err
	}
	w.MaxProcs = procs
	kept := w.Jobs[:0]
	for _, j := range w.Jobs {
		if j.Submit < 0 || !normalJob(&j, procs) {
			w.Dropped++
			continue
		}
		kept = append(kept, j)
	}
	clear(w.Jobs[len(kept):]) // let the dropped jobs' strings go
	w.Jobs = kept
	if !slices.IsSortedFunc(w.Jobs, bySubmit) {
		slices.SortStableFunc(w.Jobs, bySubmit)
	}
	return nil
}

// machineSize is the machine Normalize replays: procs when > 0, else the
// header's MaxProcs.
func machineSize(procs, maxProcs int) (int, error) {
	if procs <= 0 {
		procs = maxProcs
	}
	if procs <= 0 {
		return 0, errors.New("trace: machine size unknown (no MaxProcs header): give the number of processors")
	}
	return procs, nil
}

// normalJob applies the job-level rules of Normalize to j on a machine of
// procs processors, but for the submit time (which a stream knows only
// once it has its time base): false when j is to be dropped, else j's
// Procs and ReqTime are rewritten to what a replay uses. Normalize and
// Stream share it, so that a job is kept or dropped alike in both.
func normalJob(j *Job, procs int) bool {
	p := j.ReqProcs
	if p <= 0 {
		p = j.Procs
	}
	if j.Run < 0 || p <= 0 || p > procs || j.MinProcs > procs {
		return false
	}
	j.Procs = p
	j.MaxProcs = min(j.MaxProcs, procs)
	j.ReqTime = max(j.ReqTime, j.Run)
	return true
}

func bySubmit(x, y Job) int { return cmp.Compare(x.Submit, y.Submit) }
