package model

import "github.com/gopbs/gopbs/proto"

// Shrink-to-fit jobs (OpenPBS's): a job submitted with min_walltime (and
// max_walltime, else no upper bound) and no walltime. The scheduler
// chooses its walltime between the two when it starts it, the longest
// that ends before the next reservation, dedicated time or top job on its
// nodes, and the server stores it as Resource_List.walltime in the commit
// of the start. A job that leaves its nodes without ending (requeued, a
// start taken back) forgets it: the next start chooses again.

// ShrinkToFit reports whether rl is a shrink-to-fit job's: it names
// min_walltime.
func (r Resources) ShrinkToFit() bool {
	_, ok := r.Get(proto.ResMinWalltime)
	return ok
}

// ShrinkToFit reports whether j is a shrink-to-fit job.
func (j *Job) ShrinkToFit() bool { return j.ResourceList.ShrinkToFit() }

// forgetChosenWalltime drops the walltime a start chose for a
// shrink-to-fit job (Requeue, Unstart).
func (j *Job) forgetChosenWalltime() {
	if j.ShrinkToFit() {
		j.ResourceList = j.ResourceList.Delete(proto.ResWalltime)
	}
}
