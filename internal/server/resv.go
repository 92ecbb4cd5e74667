package server

import (
	"slices"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/server/resvs"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// Reservations (pbs_rsub, pbs_rstat, pbs_rdel, pbs_ralter), as OpenPBS
// has them. The server stores them and their queues, keeps their state
// with the clock (resvTick) and enforces their windows and nodes on every
// start; the scheduler confirms them (MsgConfirmResv), choosing their
// nodes on its calendar: the server never places one, but a maintenance
// reservation, whose manager names its hosts.
//
// A reservation's life: UNCONFIRMED until the scheduler confirms it
// (CONFIRMED, on nodes) or denies it (it goes, with the reason in the log,
// the owner's mail and a while in denied); RUNNING from its start, its
// queue started; at its end its jobs are deleted (running ones killed) and
// it goes (BEING_DELETED until its jobs are gone), or a standing one moves
// to its next occurrence, its queued jobs kept. A node of a confirmed
// reservation that goes down has the scheduler move it, or leave it
// DEGRADED with a comment; its owner and the owners of its jobs get mail.

// deniedKept is how long the reason a reservation was denied stays known
// (pbs_rstat and pbs_rsub -I name it), in memory only.
const deniedKept = 10 * time.Minute

// resvEvent is a reservation's mail point: OpenPBS's -m letters.
type resvEvent byte

const (
	resvMailAbort   resvEvent = 'a' // denied, deleted, degraded
	resvMailBegin   resvEvent = 'b'
	resvMailEnd     resvEvent = 'e'
	resvMailConfirm resvEvent = 'c'
)

// serverCaller is the server acting on its own (a reservation's end):
// privileged as the scheduler is, so that a delete keeps the comment
// saying why (resvJobs sets it).
func (s *Server) serverCaller() *caller {
	return &caller{role: proto.RoleSched, user: "Server", host: s.cfg.Host, name: "server"}
}

// submitResv is pbs_rsub.
func (s *Server) submitResv(who *caller, req *proto.ResvSubmitRequest) (*proto.ResvSubmitReply, error) {
	mgr, _ := s.privileges(who)
	if who.anonymous || who.role != proto.RoleClient && !mgr {
		return nil, proto.NewError(proto.PBSE_PERM)
	}
	attrs, err := s.resvHooks(hook.ResvSub, who, "", req.Attrs, nil, func(attrs []proto.Attr) []proto.Attr {
		r, _, err := resvs.New(resvCaller(who), attrs, req.Hosts, s.nowUnix())
		if err != nil {
			return attrs // the request's own error comes after the hooks
		}
		// The request's attributes, and the times worked out from them;
		// what it did not name stays unset (None), as in OpenPBS.
		out := append([]proto.Attr(nil), attrs...)
		for _, a := range r.Status(s.cfg.ServerName, true).Attrs {
			switch a.Name {
			case proto.AttrResvStart, proto.AttrResvEnd, proto.AttrResvDuration:
				if !slices.ContainsFunc(attrs, func(o proto.Attr) bool { return o.Name == a.Name }) {
					out = append(out, a)
				}
			}
		}
		return out
	})
	if err != nil {
		return nil, err
	}
	now := s.nowUnix()
	r, p, err := resvs.New(resvCaller(who), attrs, req.Hosts, now)
	if err != nil {
		return nil, err
	}
	var out proto.ResvSubmitReply
	var mail []mailer.Message
	err = s.commit.Do(func(b *store.Batch) error {
		if err := s.resvView().Admit(r, p, resvCaller(who), req.Hosts, mgr); err != nil {
			return err
		}
		// The reservation takes a number of the job sequence; a queue of
		// that name made by hand is stepped over (ids are never reused).
		for {
			r.Seq = s.nextSeq
			s.nextSeq++
			if _, taken := s.queues.Get(r.Queue()); !taken {
				break
			}
		}
		b.SetNextSeq(s.nextSeq)
		q := resvs.QueueOf(r)
		s.queues.Put(q)
		b.PutQueue(q)
		s.resvs.Insert(r)
		b.PutResv(r)
		out = proto.ResvSubmitReply{ID: r.ID(s.cfg.ServerName), State: r.State}
		if r.State == proto.ResvConfirmed {
			mail = s.resvMail(r, resvMailConfirm, "Reservation confirmed", false)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("reservation submitted", "resv", out.ID, "owner", r.Owner, "state", r.State.String(), "start", r.Start(), "end", r.End(), "occurrences", r.Count)
	s.resvAccount(accounting.ResvUnconfirmed, r, who)
	if r.State == proto.ResvConfirmed {
		s.resvAccount(accounting.ResvConfirmed, r, who)
	}
	s.sendMail(mail)
	s.schedEvent(proto.SchedNew)
	return &out, nil
}

// statusResvs is pbs_rstat: every reservation is shown to everyone, as in
// OpenPBS; managers and the scheduler also see reserve_occurrences.
func (s *Server) statusResvs(who *caller, req *proto.StatusRequest) (*proto.StatusReply, error) {
	mgr, op := s.privileges(who)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.resvView().Status(req, mgr || op), nil
}
