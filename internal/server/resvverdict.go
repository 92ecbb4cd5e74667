// The scheduler's verdicts on reservations (MsgConfirmResv): judged by
// resvs.View.Judge (confirmed on nodes, moved, degraded or denied, each
// checked against the nodes as they are), stored, mailed and accounted
// for here.

package server

import (
	"strings"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/resvs"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// confirmResv takes the scheduler's verdict (MsgConfirmResv).
func (s *Server) confirmResv(who *caller, req *proto.ResvConfirm) error {
	if mgr, _ := s.privileges(who); !mgr {
		return proto.Errorf(proto.PBSE_PERM, "(only the scheduler confirms reservations)")
	}
	var mail []mailer.Message
	var r *model.Resv
	var verdict resvs.Verdict
	err := s.commit.Do(func(b *store.Batch) error {
		mail = nil
		var err error
		if r, err = s.resvs.Lookup(req.ID); err != nil {
			return err
		}
		if verdict, err = s.resvView().Judge(r, req.Nodes, req.Reason, s.nowUnix(), s.resvRetryTime()); err != nil {
			return err
		}
		switch verdict {
		case resvs.Denied:
			s.resvs.Deny(r.ID(s.cfg.ServerName), req.Reason, s.now())
			mail = s.resvMail(r, resvMailAbort, "Reservation denied: "+req.Reason, false)
			s.resvs.Remove(r.Seq)
			b.DeleteResv(r.Seq)
			s.queues.Delete(r.Queue())
			b.DeleteQueue(r.Queue())
			return nil
		case resvs.Degraded:
			mail = s.resvMail(r, resvMailAbort, "Reservation degraded: "+req.Reason, true)
		case resvs.Confirmed:
			mail = s.resvMail(r, resvMailConfirm, "Reservation confirmed", false)
		case resvs.Moved:
			mail = s.resvMail(r, resvMailAbort, "Reservation moved to nodes "+strings.Join(model.NodeNames(r.Nodes()), ","), true)
		}
		b.PutResv(r)
		return nil
	})
	if err != nil {
		return err
	}
	id := r.ID(s.cfg.ServerName)
	s.log.Info("reservation "+verdict.String(), "resv", id, "nodes", r.Nodes(), "reason", req.Reason)
	switch verdict {
	case resvs.Confirmed:
		s.resvAccount(accounting.ResvConfirmed, r, &caller{user: "Scheduler", host: s.cfg.Host})
	case resvs.Denied:
		s.resvAccount(accounting.ResvRemoved, r, s.resvRemovedBy())
	}
	s.sendMail(mail)
	if verdict != resvs.Denied {
		s.resvTick(s.now())
	}
	return nil
}
