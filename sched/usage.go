package sched

import (
	"time"

	"github.com/gopbs/gopbs/internal/logging/logclass"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/sched/core"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
)

// The fair-share usage of a UsageKeeper policy on disk (see UsageKeeper).

// restoreUsage reads sched_priv/usage into the policy at start. A file
// that cannot be read is set aside (usage.damaged-<time>) with an error in
// the log naming both paths, and counting starts afresh: the scheduler
// must not refuse to schedule for want of history, nor overwrite what an
// admin may repair.
func (r *runner) restoreUsage() {
	keeper, ok := r.policy.(UsageKeeper)
	if !ok {
		return
	}
	s, err := privdir.ReadUsageFile(r.dir)
	if err != nil {
		aside, aerr := privdir.SetAsideUsageFile(r.dir, time.Now())
		if aerr != nil {
			r.log.Error("fair-share usage file unreadable and cannot be set aside; usage starts from zero", "error", err, "set_aside_error", aerr)
		} else {
			r.log.Error("fair-share usage file unreadable: set aside, usage starts from zero", "error", err, "moved_to", aside)
		}
		s = schedpriv.NewUsageState()
	}
	keeper.RestoreUsage(s)
	r.savedUsage = time.Now()
	if ur, ok := r.policy.(UsageReporter); ok {
		// Shown from the start, not from the first cycle.
		r.metrics.SetUsage(ur.Usage())
	}
}

// saveUsage writes the policy's usage when it changed and sync_time has
// passed since the last write (or always, with force: at exit, QUIT and
// CONFIGURE). A sync_time of 0 writes after every cycle that changed it.
func (r *runner) saveUsage(force bool) {
	keeper, ok := r.policy.(UsageKeeper)
	if !ok {
		return
	}
	if !force && time.Since(r.savedUsage) < keeper.SyncEvery() {
		return
	}
	r.mu.Lock()
	s, changed := keeper.UsageState()
	r.mu.Unlock()
	if s == nil || !changed {
		return
	}
	if err := privdir.WriteUsageFile(r.dir, s); err != nil {
		r.log.Error("cannot save fair-share usage", "error", err)
		return
	}
	r.savedUsage = time.Now()
}

// addEnded puts in world.Ended the jobs the policy follows that are no
// longer among the world's unfinished jobs, as the server's history shows
// them (their final resources_used). Jobs the server no longer knows are
// left out: the policy stops following them.
func (r *runner) addEnded(c *proto.Client, w *core.World) {
	keeper, ok := r.policy.(UsageKeeper)
	if !ok {
		return
	}
	r.mu.Lock()
	following := keeper.Following()
	r.mu.Unlock()
	if len(following) == 0 {
		return
	}
	present := make(map[string]bool, len(w.Jobs))
	for _, j := range w.Jobs {
		present[j.ID] = true
	}
	var missing []string
	for _, id := range following {
		if !present[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return
	}
	sts, _, err := c.StatusJobs(&proto.StatusRequest{IDs: missing, History: true, Attrs: BaseJobAttrs})
	if err != nil {
		r.log.Warn("cannot read finished jobs for fair-share usage", "error", err, logclass.Key, logclass.JobUsage)
		return
	}
	for _, st := range sts {
		if j := NewCoreJob(st); !j.Running() && !j.Queued() {
			w.Ended = append(w.Ended, j)
		}
	}
}
