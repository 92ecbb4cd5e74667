// The scheduler's verdicts on reservations (MsgConfirmResv): confirmed on
// nodes, moved, degraded or denied, each checked against the nodes as they
// are.

package server

import (
	"strings"

	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/resvspec"
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
		if r, err = s.lookupResv(req.ID); err != nil {
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
		if err := s.checkResvNodes(r, req.Nodes); err != nil {
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

// checkResvNodes verifies a confirmation's placements: known nodes, each
// occurrence's amounts within what the node has, with the other
// reservations that hold it at the same time (mu held). The scheduler
// chose them; the server only refuses what cannot be.
func (s *Server) checkResvNodes(r *model.Resv, nodes []string) error {
	for i, spec := range nodes {
		want, err := resvspec.Amounts(s.rt(), spec)
		if err != nil {
			return proto.Errorf(proto.PBSE_BADATVAL, "(%q: %v)", spec, err)
		}
		from, to := r.Occ[i].Start, r.Occ[i].Start+r.Duration
		for node, amt := range want {
			if _, ok := s.nodes.Get(node); !ok {
				return proto.Errorf(proto.PBSE_UNKNODE, "%s", node)
			}
			avail := s.nodes.Available(node)
			held := map[string]float64{}
			var with []string
			for o := range s.resvs.All() {
				if o.Seq == r.Seq || o.State == proto.ResvUnconfirmed || o.State == proto.ResvBeingDeleted {
					continue
				}
				for _, oc := range o.Occ {
					if oc.Start < to && from < oc.Start+o.Duration {
						other, _ := resvspec.Amounts(s.rt(), oc.Nodes)
						if m, ok := other[node]; ok {
							with = append(with, o.ID(s.cfg.ServerName))
							for k, v := range m {
								held[k] += v
							}
						}
					}
				}
			}
			for k, v := range amt {
				have, ok := s.rt().Number(k, avail[k])
				if !ok {
					continue
				}
				if held[k]+v > have {
					return proto.Errorf(proto.PBSE_resvFail, "(node %s has %s of %s: it overlaps %s)", node, s.rt().Format(k, have), k, strings.Join(with, ", "))
				}
			}
		}
	}
	return nil
}
