package nodes

import (
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// Reconciled is what a mom's report says of the jobs the server has on
// its node, and what the server must do about it.
type Reconciled struct {
	// Kill are jobs the mom runs (or runs a part of, as a sister) that
	// the server does not run there: the mom ends them.
	Kill []string
	// Running are the jobs the mom runs as their mother superior that
	// the server runs there too, each with the mom's report of it: its
	// usage, session, GPUs and phase, for the server to take in.
	Running []Running
	// Resync are running jobs whose mom holds another allocation than
	// the store's (a resize it did not see through): the store's wins.
	Resync []model.JobKey
	// Lost are jobs the server runs there, started more than grace ago,
	// that the mom does not report: they are requeued.
	Lost []model.JobKey
}

// Running is a job the server and the mom agree runs on the mom's node.
type Running struct {
	Job    *model.Job
	Report proto.MomJobState
}

// Reconcile reads the jobs of mom report st against the job table at now
// (a job is the same run when its run count is). resizing says whether a
// job's resize is under way (its mom's allocation is then expected to
// differ). It changes nothing.
func (v View) Reconcile(st *proto.MomStatus, now time.Time, grace time.Duration, resizing func(model.JobKey) bool) Reconciled {
	var out Reconciled
	reported := make(map[string]bool, len(st.Jobs))
	for _, mj := range st.Jobs {
		reported[mj.JobID] = true
		j, err := v.Jobs.Lookup(mj.JobID)
		if err != nil || !j.Active() || j.RunCount != mj.RunCount || j.Alloc.Mother() != st.Node {
			if !mj.Exited {
				out.Kill = append(out.Kill, mj.JobID)
			}
			continue
		}
		out.Running = append(out.Running, Running{Job: j, Report: mj})
		if mj.ExecVnode != "" && !mj.Exited && (mj.ExecVnode != j.ExecVnode() || j.Releasing.Pending()) && !resizing(j.Key()) {
			out.Resync = append(out.Resync, j.Key())
		}
	}
	for _, sj := range st.Sisters {
		// A job's part on this node for another node's mom: it goes
		// when the job no longer runs here.
		j, err := v.Jobs.Lookup(sj.JobID)
		if err != nil || !j.Active() || j.RunCount != sj.RunCount || !j.Alloc.OnHost(st.Node) {
			out.Kill = append(out.Kill, sj.JobID)
		}
	}
	for _, j := range v.Jobs.List() {
		if j.Active() && j.Alloc.Mother() == st.Node && !reported[j.ID] && now.Sub(time.Unix(j.Stime, 0)) > grace {
			out.Lost = append(out.Lost, j.Key())
		}
	}
	return out
}
