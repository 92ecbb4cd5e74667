package server

import (
	"fmt"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// Job dependencies (qsub -W depend). A job's dependencies live on the job
// (model.Depends, stored with it); the job table keeps the index of who
// waits for whom (state.Jobs.Dependants), exact at every change. When a job starts or ends, its
// dependants are updated in the same commit: met, or deleted when their
// condition can never hold.

// checkDepends checks a new job's dependencies against the jobs of the
// moment (mu held): every job named exists; a before form names a job
// not yet started. After forms on jobs that already started or ended are
// judged at once. never names a dependency that can never be met: the job
// is then admitted and deleted at once, as it would be had its parent
// ended a moment later.
//
// A before form changes the job it names (that job then waits for j, and
// is deleted when j's condition fails), so it is a modification of that
// job: allowed only when whoever asks (priv, who is j's owner) may alter
// it, as qalter would be.
func (s *Server) checkDepends(j *model.Job, priv model.Privilege) (never string, err error) {
	for i := range j.Depends {
		dep := &j.Depends[i]
		for k := range dep.Jobs {
			if dep.Jobs[k].Seq == j.Seq {
				// qalter naming the job itself: it would wait forever.
				return "", proto.Errorf(proto.PBSE_BADDEPEND, "(%s names the job itself)", dep.Type)
			}
			p, ok := s.jobs.Top(dep.Jobs[k].Seq)
			if !ok {
				return "", proto.Errorf(proto.PBSE_UNKJOBID, "%s (depend=%s)", s.jobID(dep.Jobs[k].Seq), dep.Type)
			}
			if dep.Type.IsBefore() {
				if p.Finished() || p.Active() {
					return "", proto.Errorf(proto.PBSE_BADDEPEND, "(%s:%s: that job has already started)", dep.Type, p.ID)
				}
				if p.User() != j.User() && !priv.Operator && !priv.Manager {
					return "", proto.Errorf(proto.PBSE_PERM, "(%s:%s: a before dependency makes that job wait, and only its owner, an operator or a manager may)", dep.Type, p.ID)
				}
				continue
			}
			switch model.Judge(dep.Type, p) {
			case model.DepMet:
				dep.Jobs[k].Met = true
			case model.DepNever:
				never = neverComment(dep.Type, p)
			}
		}
	}
	return never, nil
}

// neverComment says why a dependency on parent can never be met.
func neverComment(t model.DepType, parent *model.Job) string {
	how := fmt.Sprintf("ended with Exit_status %d", parent.ExitStatus)
	if t == model.DepAfter {
		how = "ended without running"
	}
	return fmt.Sprintf("Job deleted: dependency %s:%s can never be met (%s)", t, parent.ID, how)
}

// registerBefore records j's before forms on the jobs they name, which
// then wait for j (mu held, inside the commit that admits j).
func (s *Server) registerBefore(b *store.Batch, j *model.Job, now int64) {
	for _, dep := range j.Depends {
		if !dep.Type.IsBefore() {
			continue
		}
		for _, pj := range dep.Jobs {
			p, _ := s.jobs.Top(pj.Seq)
			var h model.Hooks
			s.jobs.Update(p, func() {
				p.Register(dep.Type, j.Seq)
				h = p.Settle(now)
			})
			s.save(b, p)
			s.hooks(b, p, h, now)
		}
	}
}

// hooks runs what a transition of j asks for (mu held, inside a commit).
func (s *Server) hooks(b *store.Batch, j *model.Job, h model.Hooks, now int64) {
	if j.IsSubjob {
		// Dependants wait for the whole array: its parent's own start
		// (began) and end (rollUp) release them.
		h.Began, h.Ended = false, false
	}
	if h.Began || h.Ended {
		s.releaseDependants(b, j, now)
	}
	if h.Eligible && j.QueueType == "Execution" {
		b.After(func() { s.schedEvent(proto.SchedNew) })
	}
}

// releaseDependants applies parent's new state (started or ended) to the
// jobs waiting for it: conditions met are marked, a job whose last one is
// met becomes queued, and a job whose condition can never hold is deleted
// with a comment and an accounting record, which in turn releases its own
// dependants (mu held, inside the commit of parent's change).
func (s *Server) releaseDependants(b *store.Batch, parent *model.Job, now int64) {
	// In order of their numbers, so that logs and records repeat.
	for _, seq := range s.jobs.Dependants(parent.Seq) {
		c, ok := s.jobs.Top(seq)
		if !ok || c.Finished() {
			continue
		}
		var never bool
		var h model.Hooks
		s.jobs.Update(c, func() {
			_, never = c.Resolve(parent)
			if !never && !c.Active() {
				h = c.Settle(now)
			}
		})
		if never {
			var t model.DepType
			for _, d := range c.Depends {
				for _, p := range d.Jobs {
					if p.Seq == parent.Seq && !p.Met {
						t = d.Type
					}
				}
			}
			s.deleteUnmet(b, c, neverComment(t, parent), now)
			continue
		}
		s.save(b, c)
		s.hooks(b, c, h, now)
	}
}

// deleteUnmet deletes a job whose dependency can never be met (mu held,
// inside a commit).
func (s *Server) deleteUnmet(b *store.Batch, j *model.Job, comment string, now int64) {
	if j.Active() {
		return // released by hand (qrls -h s) and running: let it be
	}
	s.finish(b, j, model.SubTerminated, ExitDeleted, comment, now)
	s.mailJob(b, j, mailer.Abort, comment)
	b.After(func() {
		s.log.Info("job deleted: dependency never met", "job", j.ID, "comment", comment)
		// OpenPBS's A record: the server deleted it, and why.
		if err := s.acct.WriteText(s.now(), accounting.Aborted, j.ID, comment); err != nil {
			s.log.Error("accounting write failed", "job", j.ID, "error", err)
		}
	})
}
