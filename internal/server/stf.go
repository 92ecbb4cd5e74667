package server

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Shrink-to-fit jobs (OpenPBS's; model/stf.go): what qsub, qalter and
// pbs_rsub may ask for, the limits that bound them, and the walltime a
// scheduler chooses for one when it starts it.

// defaultMaxWalltime is a shrink-to-fit job's max_walltime when it names
// none (OpenPBS's: 5 years).
const defaultMaxWalltime = 5 * 365 * 24 * 3600

// checkShrinkToFit applies OpenPBS's refusals to a job's resource list as
// qsub or qalter leave it. array says the job is a job array; started
// that it ran already (its walltime is the one its start chose).
func checkShrinkToFit(rt *resc.Table, rl model.Resources, array, started bool) error {
	minV, hasMin := rl.Get(proto.ResMinWalltime)
	maxV, hasMax := rl.Get(proto.ResMaxWalltime)
	if hasMax && !hasMin {
		return proto.NewError(proto.PBSE_MAX_NO_MINWT)
	}
	if !hasMin {
		return nil
	}
	if hasMax {
		if cmp, ok := rt.Compare(proto.ResMinWalltime, minV, maxV); ok && cmp > 0 {
			return proto.NewError(proto.PBSE_MIN_GT_MAXWT)
		}
	}
	if array {
		return proto.NewError(proto.PBSE_NOSTF_JOBARRAY)
	}
	if _, ok := rl.Get(proto.ResSoftWalltime); ok {
		return proto.NewError(proto.PBSE_SOFTWT_STF)
	}
	if _, ok := rl.Get(proto.ResWalltime); ok && !started {
		return proto.Errorf(proto.PBSE_BADATVAL, "(walltime with min_walltime: the scheduler sets a shrink-to-fit job's walltime when it starts it)")
	}
	return nil
}

// stfBounds are a shrink-to-fit job's min_walltime and max_walltime in
// seconds (max: defaultMaxWalltime when it names none); ok is false for
// other jobs.
func stfBounds(rl model.Resources) (lo, hi int64, ok bool) {
	minV, hasMin := rl.Get(proto.ResMinWalltime)
	if !hasMin {
		return 0, 0, false
	}
	lo, err := resc.ParseDuration(minV)
	if err != nil {
		return 0, 0, false
	}
	hi = defaultMaxWalltime
	if maxV, hasMax := rl.Get(proto.ResMaxWalltime); hasMax {
		if hi, err = resc.ParseDuration(maxV); err != nil {
			return 0, 0, false
		}
	}
	return lo, hi, true
}

// chosenWalltime is the walltime a start of j sets (RunSpec.Walltime), or
// "" when it sets none: a shrink-to-fit job that has none yet gets the
// scheduler's choice, checked against its bounds, or its max_walltime
// when the start names none (qrun); other jobs keep theirs and a start
// that names one for them is refused.
func chosenWalltime(j *model.Job, asked int64) (string, error) {
	lo, hi, stf := stfBounds(j.ResourceList)
	_, has := j.ResourceList.Get(proto.ResWalltime)
	switch {
	case !stf || has:
		if asked != 0 {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "(a start sets the walltime of a shrink-to-fit job only, one without a walltime)")
		}
		return "", nil
	case asked == 0:
		if _, named := j.ResourceList.Get(proto.ResMaxWalltime); named {
			return resc.FormatDuration(hi), nil
		}
		return "", nil // no upper bound: it runs as a job without a walltime
	case asked < lo || asked > hi:
		return "", proto.Errorf(proto.PBSE_BADATVAL, "(walltime %s is outside the job's min_walltime %s and max_walltime %s)",
			resc.FormatDuration(asked), resc.FormatDuration(lo), resc.FormatDuration(hi))
	}
	return resc.FormatDuration(asked), nil
}

// stfLimit is the value of a shrink-to-fit job's resource list that a
// resources_min or resources_max limit on name bounds: its min_walltime
// for resources_min.walltime, its max_walltime for resources_max.walltime
// (as OpenPBS), while it has no walltime of its own ("" for a job without
// max_walltime: nothing to compare); ok false for other limits and jobs.
func stfLimit(rl model.Resources, name string, isMax bool) (v string, ok bool) {
	if name != proto.ResWalltime || !rl.ShrinkToFit() {
		return "", false
	}
	if _, has := rl.Get(proto.ResWalltime); has {
		return "", false
	}
	if isMax {
		v, _ = rl.Get(proto.ResMaxWalltime)
	} else {
		v, _ = rl.Get(proto.ResMinWalltime)
	}
	return v, true
}
