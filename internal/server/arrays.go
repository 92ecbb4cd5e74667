package server

import (
	"strconv"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// Job arrays in the server. An array is its parent job (in jobs, with
// model.Array) and three kinds of subjob:
//
//   - waiting in the parent's queued indices with nothing of its own: it is
//     made from the parent when it is shown (state.Jobs.SubjobAt), and made a job of
//     its own (ownSubjob) when it starts or is held, changed or staged on
//     its own;
//   - a job of its own (queued alone, running, exiting): in the job table
//     (internal/server/state) after its parent, stored as a subjob record;
//   - finished: what is kept of it (state.Jobs.Ended), or nothing but its
//     index in the parent's Deleted set when it was deleted while it waited.
//
// The parent's Array counts its subjobs by state (the table keeps the
// counts around every change of a subjob's state); when the last one
// ends, the parent ends (rollUp) with the array's exit status, and its
// dependants are released then. The parent is B from its first subjob's start.

// ownSubjob makes subjob index of p a job of its own, to be held, changed
// or staged alone, and stores it (mu held, inside a commit). A subjob
// that already is one is returned as it is.
func (s *Server) ownSubjob(b *store.Batch, p *model.Job, index int, now int64) (*model.Job, error) {
	if j, ok := s.jobs.Get(model.JobKey{Seq: p.Seq, Index: index}); ok {
		return j, nil
	}
	id := model.FormatSubjobID(p.Seq, index, s.cfg.ServerName)
	if !p.Array.Queued.Contains(index) {
		if p.Array.Indices.Contains(index) {
			return nil, proto.Errorf(proto.PBSE_BADSTATE, "(subjob %s has finished)", id)
		}
		return nil, proto.Errorf(proto.PBSE_UNKJOBID, "%s", id)
	}
	if p.QueueType != "Execution" {
		return nil, proto.Errorf(proto.PBSE_BADSTATE, "(array %s is in route queue %s)", p.ID, p.Queue)
	}
	j := p.Subjob(index, s.cfg.ServerName, now)
	s.jobs.Insert(j)
	b.PutSubjob(j)
	return j, nil
}

// began marks array p begun when one of its subjobs starts: state B, and
// its after dependants released (mu held, inside a commit).
func (s *Server) began(b *store.Batch, p *model.Job, now int64) {
	if p.State == model.StateBegun {
		if s.eligibleTimeOn() && model.AccrueFor(p) != p.Accrual.Type {
			// Its last waiting subjob started: the array accrues no more
			// eligible time (OpenPBS's).
			s.jobs.Update(p, func() {})
			b.PutJob(p)
		}
		return
	}
	var h model.Hooks
	s.jobs.Update(p, func() { h = p.BeginArray(now) })
	b.PutJob(p)
	s.mailJob(b, p, mailer.Begin, "")
	s.hooks(b, p, h, now)
}

// endSubjob replaces finished subjob j (state F) by what is kept of it
// (mu held, inside a commit).
func (s *Server) endSubjob(b *store.Batch, j *model.Job, now int64) {
	s.jobs.Remove(j)
	s.recordEnd(b, j.Seq, model.EndOf(j), now)
}

// recordEnd keeps the end of one subjob of array seq and ends the array
// with its last subjob (mu held, inside a commit).
func (s *Server) recordEnd(b *store.Batch, seq int64, e *model.SubjobEnd, now int64) {
	p, ok := s.jobs.Top(seq)
	if !ok {
		return
	}
	s.jobs.EndSubjob(p, e)
	b.EndSubjob(seq, e)
	s.rollUp(b, p, "", now)
}

// deleteWaiting deletes subjobs of p that wait in its queued indices with
// nothing of their own: they join its Deleted set, one change of the
// parent however many there are (mu held, inside a commit).
func (s *Server) deleteWaiting(b *store.Batch, p *model.Job, indices []int, comment string, now int64) {
	if len(indices) == 0 {
		return
	}
	a := p.Array
	for _, i := range indices {
		a.Queued = a.Queued.Remove(i)
		a.Deleted = a.Deleted.Add(i)
		a.Expired++
	}
	s.jobs.Update(p, func() {})
	p.Obittime = now
	b.PutJob(p)
	s.rollUp(b, p, comment, now)
}

// rollUp ends array p once its last subjob has ended: F, with the array's
// exit status (model.ArrayExit), an E record when a subjob ran, and its
// dependants released (mu held, inside a commit). comment, when set, says
// why (a qdel of the array).
func (s *Server) rollUp(b *store.Batch, p *model.Job, comment string, now int64) {
	if p.Finished() || !p.Array.Done() {
		return
	}
	ends := s.jobs.Ends(p.Seq)
	ran := false
	for _, e := range ends {
		ran = ran || e.RunCount > 0
	}
	sub, exit := model.SubFinished, model.ArrayExit(ends)
	if !ran {
		// Deleted before any subjob ran: a failure, as for a job deleted
		// while queued.
		sub, exit = model.SubTerminated, model.ExitDeleted
	}
	s.finish(b, p, sub, exit, comment, now)
	if ran {
		s.mailJob(b, p, mailer.End, "")
		b.After(func() {
			rec := append(s.queuedRecord(p), accounting.KV{Key: "start", Value: strconv.FormatInt(p.Stime, 10)},
				accounting.KV{Key: "end", Value: strconv.FormatInt(now, 10)},
				accounting.KV{Key: "Exit_status", Value: strconv.Itoa(exit)})
			s.account(accounting.Ended, p, rec)
		})
	}
}

// resolve finds what id names for a request that changes jobs: the job
// or array (top) and, for subjob ids, the indices named that the array
// has. The caller must own the job or be an operator or manager (mu held;
// mgr and op come from privileges, called before the commit).
func (s *Server) resolve(who *caller, id string, mgr, op bool) (top *model.Job, ref model.JobRef, priv model.Privilege, err error) {
	ref, ok := model.ParseJobRef(id)
	if !ok {
		return nil, ref, priv, proto.NewError(proto.PBSE_UNKJOBID)
	}
	top, ok = s.jobs.Top(ref.Seq)
	if !ok || ref.Kind != model.IDJob && !top.IsArray() {
		return nil, ref, priv, proto.NewError(proto.PBSE_UNKJOBID)
	}
	if top.Finished() {
		return nil, ref, priv, proto.NewError(proto.PBSE_HISTJOBID)
	}
	if ref.Kind == model.IDSubjob || ref.Kind == model.IDRange {
		if len(ref.IndicesOf(top)) == 0 {
			return nil, ref, priv, proto.NewError(proto.PBSE_UNKJOBID)
		}
	}
	priv = model.Privilege{Owner: top.User() == who.user, Operator: op, Manager: mgr, Scheduler: who.role == proto.RoleSched}
	if !priv.Owner && !priv.Operator && !priv.Manager {
		return nil, ref, priv, proto.NewError(proto.PBSE_PERM)
	}
	return top, ref, priv, nil
}
