// Changing reservations: qdel of one (pbs_rdel) and the sweep of deleted
// ones, their jobs ended; pbs_ralter.

package server

import (
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/resvspec"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// mayChangeResv says whether who, a manager or operator by privileged,
// may delete or alter r: its owner, a manager or an operator (mu held).
func (s *Server) mayChangeResv(who *caller, privileged bool, r *model.Resv) error {
	if privileged || who.role == proto.RoleClient && !who.anonymous && who.user == r.EUser {
		return nil
	}
	return proto.Errorf(proto.PBSE_PERM, "(only the owner of %s, an operator or a manager may change it)", r.ID(s.cfg.ServerName))
}

// deleteResv is pbs_rdel: the reservation's jobs are deleted (running
// ones killed, as OpenPBS does), then it and its queue go.
func (s *Server) deleteResv(who *caller, id string) error {
	var jobs []string
	var mail []mailer.Message
	var r *model.Resv
	mgr, op := s.privileges(who)
	err := s.commit.Do(func(b *store.Batch) error {
		var err error
		if r, err = s.resvs.Lookup(id); err != nil {
			return err
		}
		if err := s.mayChangeResv(who, mgr || op, r); err != nil {
			return err
		}
		why := "Job deleted: the reservation was deleted by " + who.user + "@" + who.host
		jobs = s.beginResvDelete(b, r, why)
		if who.user != r.EUser {
			mail = s.resvMail(r, resvMailAbort, why, false)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.log.Info("reservation deleted", "resv", r.ID(s.cfg.ServerName), "by", who.user+"@"+who.host, "jobs", len(jobs))
	s.resvAccount('K', r, who)
	s.sendMail(mail)
	s.endResvJobs(jobs)
	s.resvSweep()
	return nil
}

// beginResvDelete marks r being deleted, its queue closed, and returns
// the ids of the jobs to delete (mu held, in a commit).
func (s *Server) beginResvDelete(b *store.Batch, r *model.Resv, why string) []string {
	r.SetState(proto.ResvBeingDeleted)
	r.Comment = why
	r.Mtime = s.nowUnix()
	b.PutResv(r)
	if q, ok := s.queues.Get(r.Queue()); ok {
		c := q.Clone()
		c.Set(proto.AttrEnabled, "", "False")
		c.Set(proto.AttrStarted, "", "False")
		s.queues.Put(c)
		b.PutQueue(c)
	}
	return s.resvJobs(b, r, true, why)
}

// resvJobs lists the unfinished jobs of r's queue, all or only those
// that run, and gives them why as their comment: they are deleted for it
// (mu held, in a commit).
func (s *Server) resvJobs(b *store.Batch, r *model.Resv, all bool, why string) []string {
	var out []string
	q := r.Queue()
	why += " (reservation " + r.ID(s.cfg.ServerName) + ")"
	for _, j := range s.jobs.List() {
		if j.Queue != q || j.Finished() || j.IsSubjob && !j.Active() {
			continue
		}
		if all || j.Active() {
			out = append(out, s.idOf(j))
			s.editJob(b, j, func() { j.Comment = why })
		}
	}
	return out
}

// endResvJobs deletes jobs for their reservation (mu not held).
func (s *Server) endResvJobs(ids []string) {
	who := s.serverCaller()
	for _, id := range ids {
		if err := s.deleteJob(who, id, proto.DeleteOptions{KillDelay: -1}); err != nil && proto.CodeOf(err) != proto.PBSE_UNKJOBID {
			s.log.Warn("cannot delete a job of a reservation", "job", id, "error", err)
		}
	}
}

// resvSweep removes the reservations being deleted whose jobs are all
// gone, with their queues.
func (s *Server) resvSweep() {
	s.mu.RLock()
	var done []int64
	for r := range s.resvs.All() {
		if r.State == proto.ResvBeingDeleted && s.jobs.Queued(r.Queue()) == 0 {
			done = append(done, r.Seq)
		}
	}
	s.mu.RUnlock()
	if len(done) == 0 {
		return
	}
	err := s.commit.Do(func(b *store.Batch) error {
		for _, seq := range done {
			r, ok := s.resvs.Get(seq)
			if !ok || r.State != proto.ResvBeingDeleted || s.jobs.Queued(r.Queue()) > 0 {
				continue
			}
			s.resvs.Remove(seq)
			b.DeleteResv(seq)
			if _, ok := s.queues.Get(r.Queue()); ok {
				s.queues.Delete(r.Queue())
				b.DeleteQueue(r.Queue())
			}
		}
		return nil
	})
	if err != nil {
		s.log.Error("cannot remove finished reservations", "error", err)
	}
}

// alterResv is pbs_ralter: a change of start or end of a confirmed
// reservation waits for the scheduler (BEING_ALTERED), and falls back to
// the old times if it is denied; users, name and mail change at once.
func (s *Server) alterResv(who *caller, req *proto.ResvAlterRequest) (*proto.ResvSubmitReply, error) {
	var out proto.ResvSubmitReply
	var r *model.Resv
	mgr, op := s.privileges(who)
	err := s.commit.Do(func(b *store.Batch) error {
		var err error
		if r, err = s.resvs.Lookup(req.ID); err != nil {
			return err
		}
		if err := s.mayChangeResv(who, mgr || op, r); err != nil {
			return err
		}
		switch r.State {
		case proto.ResvBeingDeleted, proto.ResvBeingAltered:
			return proto.Errorf(proto.PBSE_BADSTATE, "(%s is %s)", r.ID(s.cfg.ServerName), r.State)
		}
		c := *r
		now := s.nowUnix()
		p := &resvspec.Request{Start: r.Start(), End: r.End()}
		if err := resvspec.ParseAttrs(req.Attrs, &c, p); err != nil {
			return err
		}
		if len(p.Resources) > 0 || c.Rrule != r.Rrule || c.TZ != r.TZ {
			return proto.Errorf(proto.PBSE_NOSUP, "(pbs_ralter changes the start, end, users, name and mail of a reservation)")
		}
		timed := p.StartSet || p.EndSet || p.Duration > 0
		if timed {
			running := r.State == proto.ResvRunning || r.Start() <= now
			if running && p.StartSet && p.Start != r.Start() {
				return proto.Errorf(proto.PBSE_BADTSPEC, "(%s has started: only its end may change)", r.ID(s.cfg.ServerName))
			}
			if !p.StartSet {
				p.Start, p.StartSet = r.Start(), true
			}
			if !p.EndSet && p.Duration <= 0 {
				p.Duration = r.Duration
			}
			floor := now
			if running {
				floor = p.Start
			}
			if err := p.Settle(floor); err != nil {
				return err
			}
			if running && p.End <= now {
				return proto.Errorf(proto.PBSE_BADTSPEC, "(the new end is in the past)")
			}
			if len(c.Occ) > 1 && p.End > c.Occ[1].Start {
				return proto.Errorf(proto.PBSE_BADTSPEC, "(the occurrence would run into the next one)")
			}
			c.Occ = append([]model.ResvOcc(nil), r.Occ...)
			c.Occ[0].Start, c.Duration = p.Start, p.End-p.Start
			if r.State != proto.ResvUnconfirmed && c.Kind != model.ResvMaintenance {
				c.Before = &model.ResvBefore{Start: r.Start(), Duration: r.Duration, State: r.State}
				c.SetState(proto.ResvBeingAltered)
			}
		}
		c.Mtime = now
		*r = c
		b.PutResv(r)
		if q, ok := s.queues.Get(r.Queue()); ok {
			q2 := q.Clone()
			s.setResvACL(q2, r)
			s.queues.Put(q2)
			b.PutQueue(q2)
		}
		out = proto.ResvSubmitReply{ID: r.ID(s.cfg.ServerName), State: r.State}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("reservation altered", "resv", out.ID, "by", who.user+"@"+who.host, "state", out.State.String())
	s.schedEvent(proto.SchedNew)
	return &out, nil
}
