package server

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/internal/rrule"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
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

// resvOccurrenceCap is the most occurrences a standing reservation may
// have within resvHorizon (more is refused); OpenPBS counts occurrences
// only within 3 years of the submission.
const (
	resvOccurrenceCap = 1000
	resvHorizon       = 3 * 365 * 24 * time.Hour
	// deniedKept is how long the reason a reservation was denied stays
	// known (pbs_rstat and pbs_rsub -I name it), in memory only.
	deniedKept = 10 * time.Minute
)

// resvEvent is a reservation's mail point: OpenPBS's -m letters.
type resvEvent byte

const (
	resvMailAbort   resvEvent = 'a' // denied, deleted, degraded
	resvMailBegin   resvEvent = 'b'
	resvMailEnd     resvEvent = 'e'
	resvMailConfirm resvEvent = 'c'
)

// resvDenied is a reservation the scheduler denied: gone, its reason
// known for deniedKept.
type resvDenied struct {
	reason string
	at     time.Time
}

// serverCaller is the server acting on its own (a reservation's end):
// privileged as the scheduler is, so that a delete keeps the comment
// saying why (resvJobs sets it).
func (s *Server) serverCaller() *caller {
	return &caller{role: proto.RoleSched, user: "Server", host: s.cfg.Host, name: "server"}
}

// resvOf is the reservation whose queue is queue (mu held), or nil.
func (s *Server) resvOf(queue string) *model.Resv {
	if kind, seq, ok := model.ParseResvID(queue); ok && !strings.Contains(queue, ".") {
		if r := s.resvs[seq]; r != nil && r.Kind == kind {
			return r
		}
	}
	return nil
}

// lookupResv finds the reservation id names (mu held).
func (s *Server) lookupResv(id string) (*model.Resv, error) {
	kind, seq, ok := model.ParseResvID(id)
	if ok {
		if r := s.resvs[seq]; r != nil && r.Kind == kind {
			return r, nil
		}
	}
	if d, ok := s.denied[strings.TrimSpace(id)]; ok {
		return nil, proto.Errorf(proto.PBSE_UNKRESVID, "%s (denied: %s)", strings.TrimSpace(id), d.reason)
	}
	return nil, proto.Errorf(proto.PBSE_UNKRESVID, "%s", strings.TrimSpace(id))
}

// resvRequest is a pbs_rsub request read into its parts.
type resvRequest struct {
	start, end, duration int64
	startSet, endSet     bool
	rl                   map[string]string
	r                    *model.Resv
}

// parseResvAttrs reads the attributes of a submission or an alteration
// into r and the times of p.
func parseResvAttrs(attrs []proto.Attr, r *model.Resv, p *resvRequest) error {
	for _, a := range attrs {
		switch a.Name {
		case proto.AttrResvStart, proto.AttrResvEnd:
			n, err := strconv.ParseInt(strings.TrimSpace(a.Value), 10, 64)
			if err != nil || n <= 0 {
				return proto.Errorf(proto.PBSE_BADTSPEC, "(%s = %q)", a.Name, a.Value)
			}
			if a.Name == proto.AttrResvStart {
				p.start, p.startSet = n, true
			} else {
				p.end, p.endSet = n, true
			}
		case proto.AttrResvDuration:
			secs, err := resc.ParseDuration(a.Value)
			if err != nil || secs <= 0 {
				return proto.Errorf(proto.PBSE_BADTSPEC, "(%s = %q)", a.Name, a.Value)
			}
			p.duration = secs
		case proto.AttrResourceList:
			if a.Resource == proto.ResMinWalltime || a.Resource == proto.ResMaxWalltime {
				return proto.NewError(proto.PBSE_NOSTF_RESV)
			}
			if a.Resource == proto.ResWalltime {
				secs, err := resc.ParseDuration(a.Value)
				if err != nil || secs <= 0 {
					return proto.Errorf(proto.PBSE_BADTSPEC, "(walltime = %q)", a.Value)
				}
				p.duration = secs
				continue
			}
			if p.rl == nil {
				p.rl = map[string]string{}
			}
			p.rl[a.Resource] = a.Value
		case proto.AttrResvName:
			if strings.ContainsAny(a.Value, resc.ControlChars) || len(a.Value) > 236 {
				return proto.Errorf(proto.PBSE_BADATVAL, "(Reserve_Name = %q)", a.Value)
			}
			r.Name = a.Value
		case proto.AttrAuthUsers, proto.AttrAuthGroups, proto.AttrAuthHosts:
			items := model.SplitList(a.Value)
			if len(items) == 0 {
				return proto.Errorf(proto.PBSE_BADATVAL, "(%s is empty)", a.Name)
			}
			for _, it := range items {
				if strings.ContainsAny(it, " \t"+resc.ControlChars) {
					return proto.Errorf(proto.PBSE_BADATVAL, "(%s = %q)", a.Name, a.Value)
				}
			}
			switch a.Name {
			case proto.AttrAuthUsers:
				r.AuthUsers = strings.Join(items, ",")
			case proto.AttrAuthGroups:
				r.AuthGroups = strings.Join(items, ",")
			default:
				r.AuthHosts = strings.Join(items, ",")
			}
		case proto.AttrMailPoints:
			if strings.Trim(a.Value, "abecn") != "" || strings.Contains(a.Value, "n") && a.Value != "n" {
				return proto.Errorf(proto.PBSE_BADATVAL, "(Mail_Points = %q: a, b, e, c or n)", a.Value)
			}
			r.MailPoints = a.Value
		case proto.AttrMailUsers:
			v, err := mailer.ParseUsers(a.Value)
			if err != nil {
				return proto.Errorf(proto.PBSE_BADATVAL, "(Mail_Users: %v)", err)
			}
			r.MailUsers = v
		case proto.AttrResvRrule:
			r.Rrule = a.Value
		case proto.AttrResvTimezone:
			r.TZ = a.Value
		case proto.AttrResvStanding, proto.AttrVariableList:
			// Implied by reserve_rrule; the environment is not kept.
		default:
			return proto.Errorf(proto.PBSE_NOATTR, "%s (not a reservation attribute)", a.FullName())
		}
	}
	return nil
}

// resvTimes settles start, end and duration: the end is given or the
// start plus the duration; a start in the past, an end at or before the
// start, or an end and a duration that disagree are refused.
func resvTimes(p *resvRequest, now int64) error {
	if !p.startSet {
		switch {
		case p.endSet && p.duration > 0:
			p.start = p.end - p.duration
		default:
			p.start = now
		}
	}
	switch {
	case p.endSet && p.duration > 0 && p.end-p.start != p.duration:
		return proto.Errorf(proto.PBSE_BADTSPEC, "(the end and the duration disagree)")
	case !p.endSet && p.duration <= 0:
		return proto.Errorf(proto.PBSE_BADTSPEC, "(give an end (-E) or a duration (-D))")
	case !p.endSet:
		p.end = p.start + p.duration
	}
	if p.start < now {
		return proto.Errorf(proto.PBSE_BADTSPEC, "(the start %s is in the past)", time.Unix(p.start, 0).Format(time.DateTime))
	}
	if p.end <= p.start {
		return proto.Errorf(proto.PBSE_BADTSPEC, "(the end %s is not after the start %s)", time.Unix(p.end, 0).Format(time.DateTime), time.Unix(p.start, 0).Format(time.DateTime))
	}
	p.duration = p.end - p.start
	return nil
}

// rruleCodes maps a frequency to OpenPBS's code for an occurrence longer
// than its period.
var rruleCodes = map[rrule.Freq]proto.Code{
	rrule.Yearly: proto.PBSE_BAD_RRULE_YEARLY, rrule.Monthly: proto.PBSE_BAD_RRULE_MONTHLY,
	rrule.Weekly: proto.PBSE_BAD_RRULE_WEEKLY, rrule.Daily: proto.PBSE_BAD_RRULE_DAILY,
	rrule.Hourly: proto.PBSE_BAD_RRULE_HOURLY, rrule.Minutely: proto.PBSE_BAD_RRULE_MINUTELY,
	rrule.Secondly: proto.PBSE_BAD_RRULE_SECONDLY,
}

// occurrences lists a reservation's occurrences from start: one for an
// advance reservation; a standing one's from its rule in its time zone.
func occurrences(r *model.Resv, start, duration, now int64) ([]model.ResvOcc, error) {
	if r.Rrule == "" {
		return []model.ResvOcc{{Start: start}}, nil
	}
	if r.TZ == "" {
		return nil, proto.Errorf(proto.PBSE_BAD_ICAL_TZ, "(a standing reservation needs its time zone: set PBS_TZID)")
	}
	loc, err := time.LoadLocation(r.TZ)
	if err != nil || strings.HasPrefix(r.TZ, "/") || strings.Contains(r.TZ, "..") {
		return nil, proto.Errorf(proto.PBSE_BAD_ICAL_TZ, "(%q)", r.TZ)
	}
	rule, err := rrule.Parse(r.Rrule)
	switch {
	case errors.Is(err, rrule.ErrNoEnd):
		return nil, proto.NewError(proto.PBSE_BAD_RRULE_SYNTAX2)
	case err != nil:
		return nil, proto.Errorf(proto.PBSE_BAD_RRULE_SYNTAX, "(%v)", strings.TrimPrefix(err.Error(), rrule.ErrSyntax.Error()+": "))
	}
	if time.Duration(duration)*time.Second > rule.Freq.MaxDuration() {
		return nil, proto.NewError(rruleCodes[rule.Freq])
	}
	times, err := rule.Occurrences(time.Unix(start, 0).In(loc), time.Unix(now, 0).Add(resvHorizon), resvOccurrenceCap)
	if err != nil {
		return nil, proto.Errorf(proto.PBSE_BAD_RRULE_SYNTAX, "(more than %d occurrences within 3 years)", resvOccurrenceCap)
	}
	out := make([]model.ResvOcc, len(times))
	for i, t := range times {
		out[i].Start = t.Unix()
		if i > 0 && out[i].Start-out[i-1].Start < duration {
			return nil, proto.Errorf(proto.PBSE_BADTSPEC, "(occurrences %d and %d overlap: the duration is longer than the time between them)", i, i+1)
		}
	}
	return out, nil
}

// resvSelect works out a reservation's select and place from its
// Resource_List: select as given, else one chunk of the resources named
// (ncpus=1 when none).
func resvSelect(rt *resc.Table, rl map[string]string) (resc.Select, resc.Place, map[string]string, error) {
	sel, place := rl[proto.ResSelect], rl[proto.ResPlace]
	rest := map[string]string{}
	var chunk []string
	for k, v := range rl {
		if k == proto.ResSelect || k == proto.ResPlace {
			continue
		}
		c, err := rt.Canonical(k, v)
		if err != nil {
			return nil, resc.Place{}, nil, proto.Errorf(proto.PBSE_BADATVAL, "(Resource_List.%s: %v)", k, err)
		}
		if rt.Consumable(k) && k != proto.ResNodect {
			chunk = append(chunk, k+"="+c)
		}
	}
	if sel == "" {
		sort.Strings(chunk)
		if len(chunk) == 0 {
			chunk = []string{"ncpus=1"}
		}
		sel = "1:" + strings.Join(chunk, ":")
	} else if len(chunk) > 0 {
		return nil, resc.Place{}, nil, proto.Errorf(proto.PBSE_INVALJOBRESC, " %s (give a select or plain resources, not both)", strings.Join(chunk, ","))
	}
	s, err := rt.ParseSelect(sel)
	if err != nil {
		return nil, resc.Place{}, nil, proto.Errorf(proto.PBSE_BADATVAL, "(Resource_List.select = %q: %v)", sel, err)
	}
	if s.Elastic() >= 0 {
		return nil, resc.Place{}, nil, proto.Errorf(proto.PBSE_BADATVAL, "(a reservation's select has fixed chunk counts)")
	}
	if place == "" {
		place = "free"
	}
	pl, err := resc.ParsePlace(place)
	if err != nil {
		return nil, resc.Place{}, nil, proto.Errorf(proto.PBSE_BADATVAL, "(Resource_List.place = %q: %v)", place, err)
	}
	for k, v := range s.Totals() {
		rest[k] = v
	}
	rest[proto.ResNodect] = strconv.Itoa(s.NodeCount())
	return s, pl, rest, nil
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
	p := &resvRequest{r: r}
	if err := parseResvAttrs(req.Attrs, r, p); err != nil {
		return nil, err
	}
	if err := resvTimes(p, now); err != nil {
		return nil, err
	}
	r.Duration = p.duration
	if r.AuthUsers == "" {
		r.AuthUsers = r.Owner
	}
	if r.Rrule != "" {
		if len(req.Hosts) > 0 {
			return nil, proto.Errorf(proto.PBSE_BADATVAL, "(a maintenance reservation does not recur)")
		}
		r.Kind = model.ResvStanding
	}
	occ, err := occurrences(r, p.start, p.duration, now)
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
			if len(p.rl) > 0 {
				return proto.Errorf(proto.PBSE_BADATVAL, "(--hosts takes no -l: the whole hosts are reserved)")
			}
			if err := s.maintenanceNodes(r, req.Hosts); err != nil {
				return err
			}
		} else {
			sel, pl, rest, err := resvSelect(s.rt(), p.rl)
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
			if _, taken := s.queues[r.Queue()]; !taken {
				break
			}
		}
		b.SetNextSeq(s.nextSeq)
		q := s.resvQueueObject(r)
		s.queues[q.Name] = q
		b.PutQueue(q)
		s.resvs[r.Seq] = r
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
		for _, name := range s.sortedNodes() {
			if n := s.nodes[name]; n != nil && (name == h || s.nodeHost(name) == h) {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			return proto.Errorf(proto.PBSE_UNKNODE, "%s", h)
		}
		total := 0.0
		for _, name := range names {
			ncpus := 0.0
			if v, ok := s.nodeAvailable(name)[proto.ResNcpus]; ok {
				ncpus, _ = s.rt().Number(proto.ResNcpus, v)
			}
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
	if h, ok := s.nodeAvailable(name)[proto.ResHost]; ok && h != "" {
		return h
	}
	if n := s.nodes[name]; n != nil {
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
	out := &proto.StatusReply{}
	add := func(r *model.Resv) {
		st := r.Status(s.cfg.ServerName, mgr || op)
		if len(req.Attrs) > 0 {
			st.Attrs = filterAttrs(st.Attrs, req.Attrs)
		}
		out.Objects = append(out.Objects, st)
	}
	if len(req.IDs) == 0 {
		seqs := make([]int64, 0, len(s.resvs))
		for seq := range s.resvs {
			seqs = append(seqs, seq)
		}
		sort.Slice(seqs, func(a, b int) bool { return seqs[a] < seqs[b] })
		for _, seq := range seqs {
			add(s.resvs[seq])
		}
		return out, nil
	}
	for _, id := range req.IDs {
		r, err := s.lookupResv(id)
		if err != nil {
			out.Errors = append(out.Errors, objErr(id, err))
			continue
		}
		add(r)
	}
	return out, nil
}

// filterAttrs keeps the attributes named in want ("name" or
// "name.resource").
func filterAttrs(attrs []proto.Attr, want []string) []proto.Attr {
	var out []proto.Attr
	for _, a := range attrs {
		for _, w := range want {
			if w == a.Name || w == a.FullName() {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

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
		if r, err = s.lookupResv(id); err != nil {
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
	if q := s.queues[r.Queue()]; q != nil {
		c := q.Clone()
		c.Set(proto.AttrEnabled, "", "False")
		c.Set(proto.AttrStarted, "", "False")
		s.queues[c.Name] = c
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
	for _, j := range s.jobList {
		if j.Queue != q || j.Finished() || j.IsSubjob && !j.Active() {
			continue
		}
		if all || j.Active() {
			out = append(out, s.idOf(j))
			s.updateJob(j, func() { j.Comment = why })
			s.save(b, j)
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
	for seq, r := range s.resvs {
		if r.State == proto.ResvBeingDeleted && s.counts.queued(r.Queue()) == 0 {
			done = append(done, seq)
		}
	}
	s.mu.RUnlock()
	if len(done) == 0 {
		return
	}
	err := s.commit.Do(func(b *store.Batch) error {
		for _, seq := range done {
			r := s.resvs[seq]
			if r == nil || r.State != proto.ResvBeingDeleted || s.counts.queued(r.Queue()) > 0 {
				continue
			}
			delete(s.resvs, seq)
			b.DeleteResv(seq)
			if _, ok := s.queues[r.Queue()]; ok {
				delete(s.queues, r.Queue())
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
		if r, err = s.lookupResv(req.ID); err != nil {
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
		p := &resvRequest{r: &c, start: r.Start(), end: r.End()}
		if err := parseResvAttrs(req.Attrs, &c, p); err != nil {
			return err
		}
		if len(p.rl) > 0 || c.Rrule != r.Rrule || c.TZ != r.TZ {
			return proto.Errorf(proto.PBSE_NOSUP, "(pbs_ralter changes the start, end, users, name and mail of a reservation)")
		}
		timed := p.startSet || p.endSet || p.duration > 0
		if timed {
			running := r.State == proto.ResvRunning || r.Start() <= now
			if running && p.startSet && p.start != r.Start() {
				return proto.Errorf(proto.PBSE_BADTSPEC, "(%s has started: only its end may change)", r.ID(s.cfg.ServerName))
			}
			if !p.startSet {
				p.start, p.startSet = r.Start(), true
			}
			if !p.endSet && p.duration <= 0 {
				p.duration = r.Duration
			}
			floor := now
			if running {
				floor = p.start
			}
			if err := resvTimes(p, floor); err != nil {
				return err
			}
			if running && p.end <= now {
				return proto.Errorf(proto.PBSE_BADTSPEC, "(the new end is in the past)")
			}
			if len(c.Occ) > 1 && p.end > c.Occ[1].Start {
				return proto.Errorf(proto.PBSE_BADTSPEC, "(the occurrence would run into the next one)")
			}
			c.Occ = append([]model.ResvOcc(nil), r.Occ...)
			c.Occ[0].Start, c.Duration = p.start, p.end-p.start
			if r.State != proto.ResvUnconfirmed && c.Kind != model.ResvMaintenance {
				c.Before = &model.ResvBefore{Start: r.Start(), Duration: r.Duration, State: r.State}
				c.SetState(proto.ResvBeingAltered)
			}
		}
		c.Mtime = now
		*r = c
		b.PutResv(r)
		if q := s.queues[r.Queue()]; q != nil {
			q2 := q.Clone()
			s.setResvACL(q2, r)
			s.queues[q2.Name] = q2
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
				s.denied[id] = resvDenied{reason: req.Reason, at: s.now()}
				mail = s.resvMail(r, resvMailAbort, "Reservation denied: "+req.Reason, false)
				delete(s.resvs, r.Seq)
				b.DeleteResv(r.Seq)
				delete(s.queues, r.Queue())
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
		want, err := resvAmounts(s.rt(), spec)
		if err != nil {
			return proto.Errorf(proto.PBSE_BADATVAL, "(%q: %v)", spec, err)
		}
		from, to := r.Occ[i].Start, r.Occ[i].Start+r.Duration
		for node, amt := range want {
			if _, ok := s.nodes[node]; !ok {
				return proto.Errorf(proto.PBSE_UNKNODE, "%s", node)
			}
			avail := s.nodeAvailable(node)
			held := map[string]float64{}
			var with []string
			for _, o := range s.resvs {
				if o.Seq == r.Seq || o.State == proto.ResvUnconfirmed || o.State == proto.ResvBeingDeleted {
					continue
				}
				for _, oc := range o.Occ {
					if oc.Start < to && from < oc.Start+o.Duration {
						other, _ := resvAmounts(s.rt(), oc.Nodes)
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

// resvAmounts sums an exec_vnode-like string's amounts per node.
func resvAmounts(rt *resc.Table, spec string) (map[string]map[string]float64, error) {
	parts, err := place.ParseExecVnode(rt, spec)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]float64{}
	for _, p := range parts {
		m := out[p.Node]
		if m == nil {
			m = map[string]float64{}
			out[p.Node] = m
		}
		for k, v := range p.Amounts {
			m[k] += v
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no node")
	}
	return out, nil
}

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
	due := false
	for _, r := range s.resvs {
		switch {
		case r.State == proto.ResvBeingDeleted,
			r.Start() <= now && (r.State == proto.ResvUnconfirmed || r.State == proto.ResvConfirmed),
			r.End() <= now:
			due = true
		}
	}
	for id, d := range s.denied {
		if t.Sub(d.at) > deniedKept {
			due = true
			_ = id
		}
	}
	retry := false
	for _, r := range s.resvs {
		if r.State == proto.ResvDegraded && r.Retry != 0 && r.Retry <= now && s.retryAsked[r.Seq] != r.Retry {
			retry = true
		}
	}
	s.mu.RUnlock()
	if retry {
		// A degraded reservation's time to be tried again: a cycle, once
		// per retry time.
		s.mu.Lock()
		for _, r := range s.resvs {
			if r.State == proto.ResvDegraded && r.Retry != 0 && r.Retry <= now {
				s.retryAsked[r.Seq] = r.Retry
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
		for id, d := range s.denied {
			if t.Sub(d.at) > deniedKept {
				delete(s.denied, id)
			}
		}
		for _, seq := range s.resvSeqs() {
			r := s.resvs[seq]
			id := r.ID(s.cfg.ServerName)
			switch {
			case r.State == proto.ResvBeingDeleted:
			case r.End() <= now:
				// The occurrence is over: its running jobs end with it.
				if len(r.Occ) > 1 {
					jobs = append(jobs, s.resvJobs(b, r, false, "Job killed: the reservation's occurrence ended")...)
					r.Occ = r.Occ[1:]
					for len(r.Occ) > 1 && r.End() <= now {
						r.Occ = r.Occ[1:] // missed while the server was down
					}
					r.SetState(proto.ResvConfirmed)
					if r.Nodes() == "" {
						r.SetState(proto.ResvUnconfirmed)
					}
					r.Comment, r.Mtime = "", now
					b.PutResv(r)
					s.setQueueStarted(b, r, false)
					s.log.Info("reservation occurrence ended", "resv", id, "next", r.Start(), "index", r.Index())
					continue
				}
				if r.State != proto.ResvUnconfirmed {
					mail = append(mail, s.resvMail(r, resvMailEnd, "Reservation period ended", false)...)
					records = append(records, acct{'F', *r})
				}
				jobs = append(jobs, s.beginResvDelete(b, r, "Job deleted: the reservation ended")...)
				s.log.Info("reservation ended", "resv", id)
			case r.Start() <= now && r.State == proto.ResvUnconfirmed:
				if len(r.Occ) > 1 {
					continue // its next occurrence may still be confirmed
				}
				s.denied[id] = resvDenied{reason: "not confirmed before its start", at: t}
				mail = append(mail, s.resvMail(r, resvMailAbort, "Reservation not confirmed before its start", false)...)
				jobs = append(jobs, s.beginResvDelete(b, r, "Job deleted: the reservation was not confirmed before its start")...)
			case r.Start() <= now && r.State == proto.ResvConfirmed:
				r.SetState(proto.ResvRunning)
				r.Mtime = now
				b.PutResv(r)
				s.setQueueStarted(b, r, true)
				started = true
				mail = append(mail, s.resvMail(r, resvMailBegin, "Reservation period starting", false)...)
				records = append(records, acct{'B', *r})
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
		s.resvAccount(a.kind, &a.r, nil)
	}
	s.sendMail(mail)
	s.endResvJobs(jobs)
	s.resvSweep()
	if started || len(jobs) > 0 {
		s.schedEvent(proto.SchedNew)
	}
}

// resvSeqs are the reservations' numbers in order (mu held).
func (s *Server) resvSeqs() []int64 {
	out := make([]int64, 0, len(s.resvs))
	for seq := range s.resvs {
		out = append(out, seq)
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

// setQueueStarted starts or stops r's queue (mu held, in a commit).
func (s *Server) setQueueStarted(b *store.Batch, r *model.Resv, on bool) {
	q := s.queues[r.Queue()]
	if q == nil || q.Bool(proto.AttrStarted) == on {
		return
	}
	c := q.Clone()
	c.Set(proto.AttrStarted, "", resc.FormatBool(on))
	s.queues[c.Name] = c
	b.PutQueue(c)
}

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
		for _, j := range s.jobList {
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
}

// resvHolds is what running reservations keep of each node now, less
// what their own jobs use there: the amounts no other job may take, and
// the reservation of each (mu held).
func (s *Server) resvHolds(now int64) map[string]map[string]float64 {
	var out map[string]map[string]float64
	for _, r := range s.resvs {
		if !(r.Start() <= now && now < r.End()) || r.State == proto.ResvUnconfirmed || r.State == proto.ResvBeingDeleted {
			continue
		}
		held, err := resvAmounts(s.rt(), r.Nodes())
		if err != nil {
			continue
		}
		if r.Place == "exclhost" || strings.HasPrefix(r.Place, "excl") {
			for node := range held {
				held[node] = s.wholeNode(node)
			}
		}
		for _, j := range s.jobList {
			if j.Queue != r.Queue() || !j.Active() {
				continue
			}
			for _, a := range j.Assigned() {
				if m := held[a.Node]; m != nil {
					for k, v := range a.Amounts {
						m[k] -= v
					}
				}
			}
		}
		if out == nil {
			out = map[string]map[string]float64{}
		}
		for node, m := range held {
			if out[node] == nil {
				out[node] = map[string]float64{}
			}
			for k, v := range m {
				out[node][k] += max(v, 0)
			}
		}
	}
	return out
}

// wholeNode is every consumable a node has (mu held).
func (s *Server) wholeNode(node string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s.nodeAvailable(node) {
		if s.rt().Consumable(k) {
			if x, ok := s.rt().Number(k, v); ok {
				out[k] = x
			}
		}
	}
	return out
}

// resvAllows applies reservations to a start (mu held): a job of a
// reservation's queue runs only while it runs and only on its nodes, in
// what it reserved there; any other job only in what running
// reservations leave of a node.
func (s *Server) resvAllows(j *model.Job, free []*place.Node, now int64) error {
	if r := s.resvOf(j.Queue); r != nil {
		id := r.ID(s.cfg.ServerName)
		if !(r.Start() <= now && now < r.End()) || r.State != proto.ResvRunning && r.State != proto.ResvDegraded {
			return proto.Errorf(proto.PBSE_BADSTATE, "(reservation %s is %s: its jobs run only in its window)", id, r.State)
		}
		mine, _ := resvAmounts(s.rt(), r.Nodes())
		for _, n := range free {
			m, ok := mine[n.Name]
			if !ok {
				n.Free = map[string]float64{} // not the reservation's
				n.Idle, n.HostIdle = false, false
				continue
			}
			if r.Place == "exclhost" || strings.HasPrefix(r.Place, "excl") {
				continue
			}
			used := map[string]float64{}
			for _, o := range s.jobList {
				if o.Queue == r.Queue() && o.Active() {
					for _, a := range o.Assigned() {
						if a.Node == n.Name {
							for k, v := range a.Amounts {
								used[k] += v
							}
						}
					}
				}
			}
			for k := range n.Free {
				n.Free[k] = min(n.Free[k], m[k]-used[k])
			}
		}
		return nil
	}
	holds := s.resvHolds(now)
	for _, n := range free {
		if h := holds[n.Name]; h != nil {
			for k, v := range h {
				n.Free[k] -= v
			}
			n.Idle, n.HostIdle = false, false
		}
	}
	return nil
}

// nodeResvs lists the reservations that hold each node, confirmed and
// not over (pbsnodes shows them as the node's resv; mu held).
func (s *Server) nodeResvs() map[string][]string {
	out := map[string][]string{}
	for _, seq := range s.resvSeqs() {
		r := s.resvs[seq]
		if r.State == proto.ResvUnconfirmed || r.State == proto.ResvBeingDeleted {
			continue
		}
		for _, n := range model.NodeNames(r.Nodes()) {
			out[n] = append(out[n], r.ID(s.cfg.ServerName))
		}
	}
	return out
}
