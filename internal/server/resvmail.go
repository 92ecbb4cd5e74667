// A reservation's mail (its owner's, and its jobs' owners') and its
// accounting records.

package server

import (
	"maps"
	"slices"
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

// resvAccount writes a reservation's accounting record with OpenPBS's
// type and body: U when it enters (who asked, and a standing one's rule),
// Y confirmed (its times and nodes; count for a standing one), B its
// period began (owner, name, queue, times, nodes, who may use it, what it
// holds), K removed by the scheduler or the server (denied, not confirmed
// in time, its period over), k deleted by its owner; who is the
// requestor. OpenPBS writes no F record at a period's end but a K, and so
// do we. The reservation's hooks of that event run after.
func (s *Server) resvAccount(kind byte, r *model.Resv, who *caller) {
	var requestor string
	if who != nil {
		requestor = who.user + "@" + who.host
	}
	kvs := resvRecord(kind, r, requestor)
	if err := s.acct.Write(s.now(), kind, r.ID(s.cfg.ServerName), kvs); err != nil {
		s.log.Error("accounting write failed", "resv", r.ID(s.cfg.ServerName), "error", err)
	}
	s.resvEventHooks(kind, r)
}

// resvRemovedBy is the requestor of a removal the server itself makes, as
// OpenPBS names it: the scheduler's denial or the server's own clock.
func (s *Server) resvRemovedBy() *caller {
	return &caller{user: "Server", host: s.cfg.Host}
}

// resvRecord is the body of a reservation's record of kind.
func resvRecord(kind byte, r *model.Resv, requestor string) []accounting.KV {
	n := strconv.FormatInt
	switch kind {
	case accounting.ResvUnconfirmed:
		kvs := []accounting.KV{{Key: "requestor", Value: requestor}}
		if r.Kind == model.ResvStanding {
			kvs = append(kvs, accounting.KV{Key: "recurrence_rrule", Value: r.Rrule}, accounting.KV{Key: "timezone", Value: r.TZ})
		}
		return kvs
	case accounting.ResvConfirmed:
		kvs := []accounting.KV{{Key: "requestor", Value: requestor}, {Key: "start", Value: n(r.Start(), 10)},
			{Key: "end", Value: n(r.End(), 10)}, {Key: "nodes", Value: r.Nodes()}}
		if r.Kind == model.ResvStanding {
			kvs = append(kvs, accounting.KV{Key: "count", Value: strconv.Itoa(r.Count)})
		}
		return kvs
	case accounting.ResvBegin:
		kvs := []accounting.KV{{Key: "owner", Value: r.Owner}}
		if r.Name != "" {
			kvs = append(kvs, accounting.KV{Key: "name", Value: r.Name})
		}
		kvs = append(kvs, accounting.KV{Key: "queue", Value: r.Queue()}, accounting.KV{Key: "ctime", Value: n(r.Ctime, 10)},
			accounting.KV{Key: "start", Value: n(r.Start(), 10)}, accounting.KV{Key: "end", Value: n(r.End(), 10)},
			accounting.KV{Key: "duration", Value: n(r.Duration, 10)})
		if nodes := r.Nodes(); nodes != "" {
			kvs = append(kvs, accounting.KV{Key: "nodes", Value: nodes})
		}
		for _, a := range []struct{ key, v string }{{proto.AttrAuthUsers, r.AuthUsers}, {proto.AttrAuthGroups, r.AuthGroups}, {proto.AttrAuthHosts, r.AuthHosts}} {
			if a.v != "" {
				kvs = append(kvs, accounting.KV{Key: a.key, Value: a.v})
			}
		}
		res := map[string]string{}
		maps.Copy(res, r.Resources)
		if r.Select != "" {
			res["select"] = r.Select
		}
		if p := r.Place.String(); p != "" {
			res["place"] = p
		}
		for _, k := range slices.Sorted(maps.Keys(res)) {
			kvs = append(kvs, accounting.KV{Key: proto.AttrResourceList + "." + k, Value: res[k]})
		}
		return kvs
	}
	return []accounting.KV{{Key: "requestor", Value: requestor}}
}
