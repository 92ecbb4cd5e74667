package server

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// OpenPBS's eligible time (eligible_time_enable): each change of a job
// ends in the job table's Entered call (jobWatch), which gives the job the accrue_type its state calls for
// (model.AccrueFor) and folds the time of the type it leaves into its
// eligible_time. No loop rewrites jobs as time passes: what a job shows
// is worked out from when its type last changed.

// eligibleTimeOn reports whether the server keeps eligible time (mu
// held, for reading at least).
func (s *Server) eligibleTimeOn() bool { return s.server.Bool(proto.AttrEligibleTimeEnable) }

// accrue gives j the accrue_type its state calls for, at the server's
// clock (mu held; from jobWatch.Entered, so within every change of a job).
func (s *Server) accrue(j *model.Job) {
	if j.State != model.StateQueued {
		// The scheduler's word holds for the queued job it judged: any
		// other state is judged afresh once the job is queued again.
		j.LimitBlocked = false
	}
	if !s.eligibleTimeOn() {
		return
	}
	now := s.nowUnix()
	if j.Accrual.Since == 0 {
		// A new job, or an eligible_time set by qalter: its clock starts.
		j.Accrual.Since = now
	}
	to := model.AccrueFor(j)
	if to == j.Accrual.Type {
		return
	}
	from := j.Accrual.Type
	var spent int64
	j.Accrual, spent = j.Accrual.Change(to, now)
	if from != model.AccrueInitial {
		s.log.Debug("accrue type has changed", "job", j.ID, "to", to.Name(), "from", from.Name(),
			"secs", spent, "eligible_time", model.FormatEligible(j.Accrual.Eligible))
	}
}

// eligibleTimeSwitched is eligible_time_enable turned on or off (mu
// held, inside a commit): off, each job's eligible time stops where it
// is; on, it goes on from there, the time it was off counting for
// nothing, each job taking the type its state calls for now.
func (s *Server) eligibleTimeSwitched(b *store.Batch, on bool) {
	now := s.nowUnix()
	for _, j := range s.jobs.List() {
		if j.State == model.StateFinished {
			continue
		}
		s.editJob(b, j, func() {
			if on {
				j.Accrual = j.Accrual.Restart(j.Accrual.Eligible, now)
			} else {
				j.Accrual, _ = j.Accrual.Change(j.Accrual.Type, now)
			}
		})
	}
}

// accrualAltered logs a manager's qalter of eligible_time as OpenPBS's
// server does: the type stays, and the time since it was last counted
// is replaced by the value given.
func (s *Server) accrualAltered(before model.Accrual, j *model.Job, now int64) {
	s.log.Info("eligible_time altered", "job", j.ID, "accrue_type", j.Accrual.Type.Name(),
		"secs", max(0, now-before.Since), "eligible_time", model.FormatEligible(j.Accrual.Eligible))
}
