package resvs

import (
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/resvspec"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Caller is who asks for a reservation or a change of one.
type Caller struct {
	User, Host, Group string
	// Client is a user's command (not a daemon), authenticated.
	Client bool
}

// New is the reservation pbs_rsub asks for at now, before the commit
// that checks it against the server's state (Admit): its owner and
// account, its times settled (a start in the past refused), its
// occurrences (a standing one's from its rrule), its users (the owner
// when none are named). hosts are a maintenance reservation's (which does
// not recur). What is left of the request's resources is returned for
// Admit.
func New(who Caller, attrs []proto.Attr, hosts []string, now int64) (*model.Resv, *resvspec.Request, error) {
	r := &model.Resv{Kind: model.ResvAdvance, Owner: who.User + "@" + who.Host, EUser: who.User, EGroup: who.Group,
		State: proto.ResvUnconfirmed, Ctime: now, Mtime: now}
	p := &resvspec.Request{}
	if err := resvspec.ParseAttrs(attrs, r, p); err != nil {
		return nil, nil, err
	}
	if err := p.Settle(now); err != nil {
		return nil, nil, err
	}
	r.Duration = p.Duration
	if r.AuthUsers == "" {
		r.AuthUsers = r.Owner
	}
	if r.Rrule != "" {
		if len(hosts) > 0 {
			return nil, nil, proto.Errorf(proto.PBSE_BADATVAL, "(a maintenance reservation does not recur)")
		}
		r.Kind = model.ResvStanding
	}
	occ, err := resvspec.Occurrences(r, p.Start, p.Duration, now)
	if err != nil {
		return nil, nil, err
	}
	r.Occ, r.Count = occ, len(occ)
	return r, p, nil
}

// Admit checks a new reservation r against the server's state (inside
// the commit that stores it): resv_enable and acl_resv_users (a manager
// passes both), and its request: a maintenance reservation of hosts (a
// manager's, no -l: their nodes whole, confirmed at once), or chunks
// (select, place, the rest of its Resource_List) read with the site's
// resources.
func (v View) Admit(r *model.Resv, p *resvspec.Request, who Caller, hosts []string, mgr bool) error {
	if val, ok := v.Server.Get(proto.AttrResvEnable); ok && val != "True" && !mgr {
		return proto.Errorf(proto.PBSE_RESVAUTH_U, "(the server's resv_enable is False)")
	}
	if v.Server.Bool(proto.AttrAclResvUserEnable) && !mgr {
		users, _ := v.Server.Get(proto.AttrAclResvUsers)
		if !model.MatchesUserList(users, who.User, who.Host) {
			return proto.Errorf(proto.PBSE_RESVAUTH_U, "(%s is not in the server's acl_resv_users)", who.User)
		}
	}
	if len(hosts) == 0 {
		sel, pl, rest, err := resvspec.Select(v.Table, p.Resources)
		if err != nil {
			return err
		}
		r.Select, r.Place, r.Resources = sel.String(), pl, rest
		return nil
	}
	if !mgr {
		return proto.Errorf(proto.PBSE_PERM, "(only a manager may reserve hosts for maintenance)")
	}
	if len(p.Resources) > 0 {
		return proto.Errorf(proto.PBSE_BADATVAL, "(--hosts takes no -l: the whole hosts are reserved)")
	}
	return v.maintenance(r, hosts)
}

// maintenance gives a maintenance reservation every node of hosts,
// whole (place=exclhost), confirmed at once: the manager chose them.
func (v View) maintenance(r *model.Resv, hosts []string) error {
	r.Kind = model.ResvMaintenance
	var sel, nodes []string
	for _, h := range hosts {
		var names []string
		for _, name := range v.Nodes.Names() {
			if name == h || v.NodeHost(name) == h {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			return proto.Errorf(proto.PBSE_UNKNODE, "%s", h)
		}
		total := 0.0
		for _, name := range names {
			ncpus := v.Nodes.Amounts(name)[proto.ResNcpus]
			total += ncpus
			nodes = append(nodes, "("+name+":ncpus="+strconv.FormatFloat(ncpus, 'f', -1, 64)+")")
		}
		sel = append(sel, "host="+h+":ncpus="+strconv.FormatFloat(total, 'f', -1, 64))
	}
	r.Select, r.Place = "1:"+strings.Join(sel, "+1:"), resc.Place{Sharing: resc.SharingExclHost}
	if s, err := v.Table.ParseSelect(r.Select); err == nil {
		r.Select = s.String()
		r.Resources = s.Totals()
		r.Resources[proto.ResNodect] = strconv.Itoa(s.NodeCount())
	}
	r.Hosts = hosts
	r.Occ[0].Nodes = strings.Join(nodes, "+")
	r.SetState(proto.ResvConfirmed)
	return nil
}

// NodeHost is the host a node is on: resources_available.host, else its
// Mom, else its name.
func (v View) NodeHost(name string) string {
	if h, ok := v.Nodes.AvailOne(name, proto.ResHost); ok && h != "" {
		return h
	}
	if n, ok := v.Nodes.Get(name); ok {
		if m, ok := n.Get(proto.AttrNodeMom); ok && m != "" {
			return model.ShortHost(m)
		}
	}
	return name
}

// QueueOf is a reservation's queue: an execution queue only its
// authorized users (and groups, and hosts) may submit to, stopped until
// the reservation runs.
func QueueOf(r *model.Resv) *model.Object {
	q := model.NewObject(r.Queue())
	q.Set(proto.AttrQueueTypeQ, "", "Execution")
	q.Set(proto.AttrEnabled, "", "True")
	q.Set(proto.AttrStarted, "", "False")
	SetACL(q, r)
	return q
}

// SetACL gives a reservation's queue q the reservation's access lists
// (an empty group or host list turns that list off).
func SetACL(q *model.Object, r *model.Resv) {
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

// MayChange says whether who, a manager or operator by privileged, may
// delete or alter r: its owner, a manager or an operator.
func (v View) MayChange(who Caller, privileged bool, r *model.Resv) error {
	if privileged || who.Client && who.User == r.EUser {
		return nil
	}
	return proto.Errorf(proto.PBSE_PERM, "(only the owner of %s, an operator or a manager may change it)", r.ID(v.ServerName))
}

// Altered is r as pbs_ralter's attrs change it at now (r is left as it
// was): users, name and mail at once; a new start or end of one the
// scheduler confirmed waits for its word (BEING_ALTERED, the times before
// kept to fall back on), an unconfirmed or maintenance one's applies at
// once. Only the end of one that started may change, not into the past
// nor into its next occurrence; its resources, rrule and time zone do
// not.
func (v View) Altered(r *model.Resv, attrs []proto.Attr, now int64) (*model.Resv, error) {
	switch r.State {
	case proto.ResvBeingDeleted, proto.ResvBeingAltered:
		return nil, proto.Errorf(proto.PBSE_BADSTATE, "(%s is %s)", r.ID(v.ServerName), r.State)
	}
	c := *r
	p := &resvspec.Request{Start: r.Start(), End: r.End()}
	if err := resvspec.ParseAttrs(attrs, &c, p); err != nil {
		return nil, err
	}
	if len(p.Resources) > 0 || c.Rrule != r.Rrule || c.TZ != r.TZ {
		return nil, proto.Errorf(proto.PBSE_NOSUP, "(pbs_ralter changes the start, end, users, name and mail of a reservation)")
	}
	if p.StartSet || p.EndSet || p.Duration > 0 {
		running := r.State == proto.ResvRunning || r.Start() <= now
		if running && p.StartSet && p.Start != r.Start() {
			return nil, proto.Errorf(proto.PBSE_BADTSPEC, "(%s has started: only its end may change)", r.ID(v.ServerName))
		}
		if !p.StartSet {
			p.Start, p.StartSet = r.Start(), true
		}
		if !p.EndSet && p.Duration <= 0 {
			p.Duration = r.Duration
		}
		floor := now
		if running {
			floor = p.Start
		}
		if err := p.Settle(floor); err != nil {
			return nil, err
		}
		if running && p.End <= now {
			return nil, proto.Errorf(proto.PBSE_BADTSPEC, "(the new end is in the past)")
		}
		if len(c.Occ) > 1 && p.End > c.Occ[1].Start {
			return nil, proto.Errorf(proto.PBSE_BADTSPEC, "(the occurrence would run into the next one)")
		}
		c.Occ = append([]model.ResvOcc(nil), r.Occ...)
		c.Occ[0].Start, c.Duration = p.Start, p.End-p.Start
		if r.State != proto.ResvUnconfirmed && c.Kind != model.ResvMaintenance {
			c.Before = &model.ResvBefore{Start: r.Start(), Duration: r.Duration, State: r.State}
			c.SetState(proto.ResvBeingAltered)
		}
	}
	c.Mtime = now
	return &c, nil
}
