// The scheduler's verdicts on reservations (MsgConfirmResv): confirmed on
// nodes, moved, degraded or denied, each checked against the nodes as they
// are.

package server

import (
	"strings"

	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
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
	var verdict string
	gone := false
	err := s.commit.Do(func(b *store.Batch) error {
		mail, verdict, gone = nil, "", false
		var err error
		if r, err = s.resvs.Lookup(req.ID); err != nil {
			return err
		}
		now := s.nowUnix()
		id := r.ID(s.cfg.ServerName)
		if len(req.Nodes) == 0 {
			switch r.State {
			case proto.ResvUnconfirmed:
				verdict, gone = "denied", true
				s.resvs.Deny(id, req.Reason, s.now())
				mail = s.resvMail(r, resvMailAbort, "Reservation denied: "+req.Reason, false)
				s.resvs.Remove(r.Seq)
				b.DeleteResv(r.Seq)
				s.queues.Delete(r.Queue())
				b.DeleteQueue(r.Queue())
			case proto.ResvBeingAltered:
				verdict = "alteration denied"
				r.Occ[0].Start, r.Duration = r.Before.Start, r.Before.Duration
				r.SetState(r.Before.State)
				r.Before = nil
				r.Comment = "Alteration denied: " + req.Reason
				b.PutResv(r)
			case proto.ResvConfirmed, proto.ResvRunning:
				verdict = "degraded"
				r.SetState(proto.ResvDegraded)
				r.Comment = req.Reason
				r.Retry = now + s.resvRetryTime()
				b.PutResv(r)
				mail = s.resvMail(r, resvMailAbort, "Reservation degraded: "+req.Reason, true)
			case proto.ResvDegraded:
				// Tried again and still no room: the next try is
				// reserve_retry_time on.
				r.Comment = req.Reason
				r.Retry = now + s.resvRetryTime()
				b.PutResv(r)
			default:
				return proto.Errorf(proto.PBSE_BADSTATE, "(%s is %s)", id, r.State)
			}
			return nil
		}
		if len(req.Nodes) != len(r.Occ) {
			return proto.Errorf(proto.PBSE_BADATVAL, "(%d placements for %d occurrences)", len(req.Nodes), len(r.Occ))
		}
		if err := s.resvView().CheckNodes(r, req.Nodes); err != nil {
			return err
		}
		was := r.State
		for i := range r.Occ {
			r.Occ[i].Nodes = req.Nodes[i]
		}
		r.Before = nil
		r.Retry = 0
		r.SetState(proto.ResvConfirmed)
		if r.Start() <= now && was != proto.ResvUnconfirmed {
			r.SetState(proto.ResvRunning)
		}
		r.Comment = ""
		r.Mtime = now
		b.PutResv(r)
		switch was {
		case proto.ResvUnconfirmed:
			verdict = "confirmed"
			mail = s.resvMail(r, resvMailConfirm, "Reservation confirmed", false)
		case proto.ResvDegraded, proto.ResvConfirmed, proto.ResvRunning:
			verdict = "moved"
			mail = s.resvMail(r, resvMailAbort, "Reservation moved to nodes "+strings.Join(model.NodeNames(r.Nodes()), ","), true)
		default:
			verdict = "altered"
		}
		return nil
	})
	if err != nil {
		return err
	}
	id := r.ID(s.cfg.ServerName)
	s.log.Info("reservation "+verdict, "resv", id, "nodes", r.Nodes(), "reason", req.Reason)
	switch verdict {
	case "confirmed":
		s.resvAccount('Y', r, who)
	case "denied":
		s.resvAccount('K', r, who)
	}
	s.sendMail(mail)
	if !gone {
		s.resvTick(s.now())
	}
	return nil
}
