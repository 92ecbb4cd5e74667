// Reservations and the clock: each tick moves them through their states
// (begin, end, the next occurrence of a standing one, a retry of one not
// confirmed) and starts or stops their queues.

package server

import (
	"strconv"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/resvs"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// resvRetryDefault is reserve_retry_time when unset (seconds), as
// OpenPBS's.
const resvRetryDefault = 600

// resvRetryTime is reserve_retry_time (mu held).
func (s *Server) resvRetryTime() int64 {
	if v, ok := s.server.Get(proto.AttrReserveRetryTime); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return resvRetryDefault
}

// resvTick moves reservations along with the clock: an unconfirmed one
// whose start came goes; a confirmed one starts (its queue started); an
// occurrence that ended ends its jobs and the reservation goes or, when
// standing, waits for its next occurrence.
func (s *Server) resvTick(t time.Time) {
	now := t.Unix()
	s.mu.RLock()
	due, retry := s.resvs.Stale(t, deniedKept), false
	for r := range s.resvs.All() {
		due = due || resvs.Due(r, now)
		retry = retry || resvs.RetryDue(r, now, s.resvs.RetryAsked(r.Seq))
	}
	s.mu.RUnlock()
	if retry {
		// A degraded reservation's time to be tried again: a cycle, once
		// per retry time.
		s.mu.Lock()
		for r := range s.resvs.All() {
			if r.State == proto.ResvDegraded && r.Retry != 0 && r.Retry <= now {
				s.resvs.AskRetry(r.Seq, r.Retry)
			}
		}
		s.mu.Unlock()
		s.schedEvent(proto.SchedTime)
	}
	if !due {
		return
	}
	var jobs []string
	var mail []mailer.Message
	started := false
	type acct struct {
		kind byte
		r    model.Resv
	}
	var records []acct
	err := s.commit.Do(func(b *store.Batch) error {
		jobs, mail, started, records = nil, nil, false, nil
		s.resvs.ForgetDenials(t, deniedKept)
		for r := range s.resvs.All() {
			id := r.ID(s.cfg.ServerName)
			switch resvs.Advance(r, now) {
			case resvs.StepNextOccurrence:
				// Its running jobs end with the occurrence (Advance made
				// the next current: they are found by queue).
				jobs = append(jobs, s.resvJobs(b, r, false, "Job killed: the reservation's occurrence ended")...)
				b.PutResv(r)
				s.setQueueStarted(b, r, false)
				s.log.Info("reservation occurrence ended", "resv", id, "next", r.Start(), "index", r.Index())
			case resvs.StepEnd:
				if r.State != proto.ResvUnconfirmed {
					mail = append(mail, s.resvMail(r, resvMailEnd, "Reservation period ended", false)...)
					records = append(records, acct{accounting.ResvRemoved, *r})
				}
				jobs = append(jobs, s.beginResvDelete(b, r, "Job deleted: the reservation ended")...)
				s.log.Info("reservation ended", "resv", id)
			case resvs.StepNotConfirmed:
				s.resvs.Deny(id, "not confirmed before its start", t)
				mail = append(mail, s.resvMail(r, resvMailAbort, "Reservation not confirmed before its start", false)...)
				records = append(records, acct{accounting.ResvRemoved, *r})
				jobs = append(jobs, s.beginResvDelete(b, r, "Job deleted: the reservation was not confirmed before its start")...)
			case resvs.StepBegin:
				b.PutResv(r)
				s.setQueueStarted(b, r, true)
				started = true
				mail = append(mail, s.resvMail(r, resvMailBegin, "Reservation period starting", false)...)
				records = append(records, acct{accounting.ResvBegin, *r})
				s.log.Info("reservation running", "resv", id, "nodes", r.Nodes())
			}
		}
		return nil
	})
	if err != nil {
		s.log.Error("cannot move reservations along", "error", err)
		return
	}
	for _, a := range records {
		var by *caller
		if a.kind == accounting.ResvRemoved {
			by = s.resvRemovedBy()
		}
		s.resvAccount(a.kind, &a.r, by)
	}
	s.sendMail(mail)
	s.endResvJobs(jobs)
	s.resvSweep()
	if started || len(jobs) > 0 {
		s.schedEvent(proto.SchedNew)
	}
}

// setQueueStarted starts or stops r's queue (mu held, in a commit).
func (s *Server) setQueueStarted(b *store.Batch, r *model.Resv, on bool) {
	q, _ := s.queues.Get(r.Queue())
	if q == nil || q.Bool(proto.AttrStarted) == on {
		return
	}
	c := q.Clone()
	c.Set(proto.AttrStarted, "", resc.FormatBool(on))
	s.queues.Put(c)
	b.PutQueue(c)
}
