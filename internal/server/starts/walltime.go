package starts

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// defaultMaxWalltime is a shrink-to-fit job's max_walltime when it names
// none (OpenPBS's: 5 years).
const defaultMaxWalltime = 5 * 365 * 24 * 3600

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

// ChosenWalltime is the walltime a start of j sets (RunSpec.Walltime), or
// "" when it sets none: a shrink-to-fit job that has none yet gets the
// scheduler's choice, checked against its bounds, or its max_walltime
// when the start names none (qrun); other jobs keep theirs and a start
// that names one for them is refused.
func ChosenWalltime(j *model.Job, asked int64) (string, error) {
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
