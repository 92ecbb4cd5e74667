// A reservation's mail (its owner's, and its jobs' owners') and its
// accounting records.

package server

import (
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// resvMail composes r's mail for ev when its Mail_Points ask for it (an
// unset Mail_Points mails aborts and confirmations); occupants adds the
// owners of its jobs (mu held).
func (s *Server) resvMail(r *model.Resv, ev resvEvent, text string, occupants bool) []mailer.Message {
	if s.mailer == nil {
		return nil
	}
	points := r.MailPoints
	if points == "" {
		points = "ac"
	}
	if strings.Contains(points, "n") || !strings.ContainsRune(points, rune(ev)) {
		return nil
	}
	from, _ := s.server.Get(proto.AttrMailFrom)
	if from == "" {
		from = mailer.DefaultFrom
	}
	m := mailer.ComposeResv(from, mailer.Resv{ID: r.ID(s.cfg.ServerName), Name: r.Name, Owner: r.Owner, MailUsers: r.MailUsers}, text)
	out := []mailer.Message{m}
	if occupants {
		seen := map[string]bool{r.Owner: true}
		for _, j := range s.jobs.List() {
			if j.Queue == r.Queue() && !j.Finished() && !seen[j.Owner] {
				seen[j.Owner] = true
				out = append(out, mailer.ComposeResv(from, mailer.Resv{ID: r.ID(s.cfg.ServerName), Name: r.Name, Owner: j.Owner, MailUsers: j.MailUsers}, text+"\nYour job "+s.idOf(j)+" is in this reservation."))
			}
		}
	}
	return out
}

// sendMail hands composed mail to the mailer (mu not held).
func (s *Server) sendMail(msgs []mailer.Message) {
	if s.mailer == nil {
		return
	}
	for _, m := range msgs {
		s.mailer.Send(m)
	}
}

// resvAccount writes a reservation's accounting record, OpenPBS's kinds:
// U submitted, Y confirmed, B its period began, F it finished, K deleted
// (or denied).
func (s *Server) resvAccount(kind byte, r *model.Resv, who *caller) {
	kvs := []accounting.KV{
		{Key: "owner", Value: r.Owner}, {Key: "name", Value: r.Name}, {Key: "queue", Value: r.Queue()},
		{Key: "start", Value: strconv.FormatInt(r.Start(), 10)}, {Key: "end", Value: strconv.FormatInt(r.End(), 10)},
		{Key: "duration", Value: strconv.FormatInt(r.Duration, 10)}, {Key: "nodes", Value: r.Nodes()},
	}
	if who != nil {
		kvs = append(kvs, accounting.KV{Key: "requestor", Value: who.user + "@" + who.host})
	}
	if err := s.acct.Write(s.now(), kind, r.ID(s.cfg.ServerName), kvs); err != nil {
		s.log.Error("accounting write failed", "resv", r.ID(s.cfg.ServerName), "error", err)
	}
	s.resvEventHooks(kind, r)
}
