// Changing reservations: qdel of one (pbs_rdel) and the sweep of deleted
// ones, their jobs ended; pbs_ralter.

package server

import (
	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/resvs"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

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
		if err := s.resvView().MayChange(resvCaller(who), mgr || op, r); err != nil {
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
	// OpenPBS's k when its owner deletes it, K when another does.
	kind := byte(accounting.ResvRemoved)
	if who.user+"@"+who.host == r.Owner {
		kind = accounting.ResvDeleted
	}
	s.resvAccount(kind, r, who)
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
	if s.hasHooks(hook.ModifyResv) {
		s.mu.RLock()
		var cur map[string]any
		var id string
		if r, err := s.resvs.Lookup(req.ID); err == nil {
			st := r.Status(s.cfg.ServerName, true)
			id, cur = st.Name, map[string]any{"id": st.Name, "attrs": hookAttrs(st.Attrs)}
		}
		s.mu.RUnlock()
		if cur != nil { // else the alteration's own lookup says why
			attrs, err := s.resvHooks(hook.ModifyResv, who, id, req.Attrs, cur, func(attrs []proto.Attr) []proto.Attr {
				s.mu.RLock()
				defer s.mu.RUnlock()
				r, err := s.resvs.Lookup(req.ID)
				if err != nil {
					return attrs
				}
				c, err := s.resvView().Altered(r, attrs, s.nowUnix())
				if err != nil {
					return attrs
				}
				return c.Status(s.cfg.ServerName, true).Attrs
			})
			if err != nil {
				return nil, err
			}
			alt := *req
			alt.Attrs = attrs
			req = &alt
		}
	}
	err := s.commit.Do(func(b *store.Batch) error {
		var err error
		if r, err = s.resvs.Lookup(req.ID); err != nil {
			return err
		}
		if err := s.resvView().MayChange(resvCaller(who), mgr || op, r); err != nil {
			return err
		}
		c, err := s.resvView().Altered(r, req.Attrs, s.nowUnix())
		if err != nil {
			return err
		}
		*r = *c
		b.PutResv(r)
		if q, ok := s.queues.Get(r.Queue()); ok {
			q2 := q.Clone()
			resvs.SetACL(q2, r)
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
