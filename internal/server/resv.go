package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/resvspec"
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

// resvOf is the reservation whose queue is queue (mu held), or nil.
func (s *Server) resvOf(queue string) *model.Resv {
	r, _ := s.resvs.OfQueue(queue)
	return r
}

// mayReserve enforces resv_enable and acl_resv_users (mu held).
func (s *Server) mayReserve(who *caller, mgr bool) error {
	if v, ok := s.server.Get(proto.AttrResvEnable); ok && v != "True" && !mgr {
		return proto.Errorf(proto.PBSE_RESVAUTH_U, "(the server's resv_enable is False)")
	}
	if s.server.Bool(proto.AttrAclResvUserEnable) && !mgr {
		users, _ := s.server.Get(proto.AttrAclResvUsers)
		if !matchesUserList(users, who.user, who.host) {
			return proto.Errorf(proto.PBSE_RESVAUTH_U, "(%s is not in the server's acl_resv_users)", who.user)
		}
	}
	return nil
}

// submitResv is pbs_rsub.
func (s *Server) submitResv(who *caller, req *proto.ResvSubmitRequest) (*proto.ResvSubmitReply, error) {
	mgr, _ := s.privileges(who)
	if who.anonymous || who.role != proto.RoleClient && !mgr {
		return nil, proto.NewError(proto.PBSE_PERM)
	}
	now := s.nowUnix()
	r := &model.Resv{Kind: model.ResvAdvance, Owner: who.user + "@" + who.host, EUser: who.user, EGroup: who.group,
		State: proto.ResvUnconfirmed, Ctime: now, Mtime: now}
	p := &resvspec.Request{}
	if err := resvspec.ParseAttrs(req.Attrs, r, p); err != nil {
		return nil, err
	}
	if err := p.Settle(now); err != nil {
		return nil, err
	}
	r.Duration = p.Duration
	if r.AuthUsers == "" {
		r.AuthUsers = r.Owner
	}
	if r.Rrule != "" {
		if len(req.Hosts) > 0 {
			return nil, proto.Errorf(proto.PBSE_BADATVAL, "(a maintenance reservation does not recur)")
		}
		r.Kind = model.ResvStanding
	}
	occ, err := resvspec.Occurrences(r, p.Start, p.Duration, now)
	if err != nil {
		return nil, err
	}
	r.Occ, r.Count = occ, len(occ)
	var out proto.ResvSubmitReply
	var mail []mailer.Message
	err = s.commit.Do(func(b *store.Batch) error {
		if err := s.mayReserve(who, mgr); err != nil {
			return err
		}
		if len(req.Hosts) > 0 {
			if !mgr {
				return proto.Errorf(proto.PBSE_PERM, "(only a manager may reserve hosts for maintenance)")
			}
			if len(p.Resources) > 0 {
				return proto.Errorf(proto.PBSE_BADATVAL, "(--hosts takes no -l: the whole hosts are reserved)")
			}
			if err := s.maintenanceNodes(r, req.Hosts); err != nil {
				return err
			}
		} else {
			sel, pl, rest, err := resvspec.Select(s.rt(), p.Resources)
			if err != nil {
				return err
			}
			r.Select, r.Place, r.Resources = sel.String(), pl.String(), rest
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
		q := s.resvQueueObject(r)
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
	s.resvAccount('U', r, who)
	if r.State == proto.ResvConfirmed {
		s.resvAccount('Y', r, who)
	}
	s.sendMail(mail)
	s.schedEvent(proto.SchedNew)
	return &out, nil
}

// maintenanceNodes gives a maintenance reservation every node of hosts,
// whole (place=exclhost), confirmed at once: the manager chose them
// (mu held).
func (s *Server) maintenanceNodes(r *model.Resv, hosts []string) error {
	r.Kind = model.ResvMaintenance
	var sel, nodes []string
	for _, h := range hosts {
		var names []string
		for _, name := range s.nodes.Names() {
			if name == h || s.nodeHost(name) == h {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			return proto.Errorf(proto.PBSE_UNKNODE, "%s", h)
		}
		total := 0.0
		for _, name := range names {
			ncpus := s.nodes.Amounts(name)[proto.ResNcpus]
			total += ncpus
			nodes = append(nodes, "("+name+":ncpus="+strconv.FormatFloat(ncpus, 'f', -1, 64)+")")
		}
		sel = append(sel, "host="+h+":ncpus="+strconv.FormatFloat(total, 'f', -1, 64))
	}
	r.Select, r.Place = "1:"+strings.Join(sel, "+1:"), "exclhost"
	if s, err := s.rt().ParseSelect(r.Select); err == nil {
		r.Select = s.String()
		r.Resources = s.Totals()
		r.Resources[proto.ResNodect] = strconv.Itoa(s.NodeCount())
	}
	r.Hosts = hosts
	r.Occ[0].Nodes = strings.Join(nodes, "+")
	r.SetState(proto.ResvConfirmed)
	return nil
}

// nodeHost is the host a node is on: resources_available.host, else its
// Mom, else its name (mu held).
func (s *Server) nodeHost(name string) string {
	if h, ok := s.nodes.AvailOne(name, proto.ResHost); ok && h != "" {
		return h
	}
	if n, ok := s.nodes.Get(name); ok {
		if m, ok := n.Get(proto.AttrNodeMom); ok && m != "" {
			return shortHost(m)
		}
	}
	return name
}

// resvQueueObject is a reservation's queue: an execution queue only its
// authorized users (and groups) may submit to, started while the
// reservation runs.
func (s *Server) resvQueueObject(r *model.Resv) *model.Object {
	q := model.NewObject(r.Queue())
	q.Set(proto.AttrQueueTypeQ, "", "Execution")
	q.Set(proto.AttrEnabled, "", "True")
	q.Set(proto.AttrStarted, "", "False")
	s.setResvACL(q, r)
	return q
}

func (s *Server) setResvACL(q *model.Object, r *model.Resv) {
	q.Set(proto.AttrAclUserEnable, "", "True")
	q.Set(proto.AttrAclUsers, "", r.AuthUsers)
	setACL(q, proto.AttrAclGroupEnable, proto.AttrAclGroups, r.AuthGroups)
	setACL(q, proto.AttrAclHostEnable, proto.AttrAclHosts, r.AuthHosts)
}

// setACL turns q's access list enable/list on with list, or off when
// list is empty.
func setACL(q *model.Object, enable, attr, list string) {
	if list == "" {
		q.Unset(enable, "")
		q.Unset(attr, "")
		return
	}
	q.Set(enable, "", "True")
	q.Set(attr, "", list)
}

// statusResvs is pbs_rstat: every reservation is shown to everyone, as in
// OpenPBS; managers and the scheduler also see reserve_occurrences.
func (s *Server) statusResvs(who *caller, req *proto.StatusRequest) (*proto.StatusReply, error) {
	mgr, op := s.privileges(who)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.resvView().Status(req, mgr || op), nil
}
