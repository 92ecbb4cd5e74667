package admit

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Shrink-to-fit jobs (OpenPBS's; model/stf.go): what qsub, qalter and
// pbs_rsub may ask for, the limits that bound them, and the walltime a
// scheduler chooses for one when it starts it.

// CheckShrinkToFit applies OpenPBS's refusals to a job's resource list as
// qsub or qalter leave it. array says the job is a job array; started
// that it ran already (its walltime is the one its start chose).
func CheckShrinkToFit(rt *resc.Table, rl model.Resources, array, started bool) error {
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
