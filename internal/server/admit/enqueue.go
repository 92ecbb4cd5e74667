package admit

import (
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Enqueue admits j into queue q: a route queue forwards it to the first
// destination that accepts it; an execution queue checks its limits and
// ACLs, applies defaults and derives the job's select. It returns the job
// as placed (a modified copy); j itself is not changed. mu is held.
func (v View) Enqueue(j *model.Job, q *model.Object, who Caller, routed bool, now int64) (*model.Job, error) {
	if !q.Bool(proto.AttrEnabled) {
		return nil, proto.Errorf(proto.PBSE_QUNOENB, "%s", q.Name)
	}
	if !routed && q.Bool(proto.AttrFromRouteOnly) {
		return nil, proto.Errorf(proto.PBSE_QACESS, "%s accepts jobs only from route queues", q.Name)
	}
	if err := v.checkCounts(j, q); err != nil {
		return nil, err
	}
	if err := v.checkArray(j, q); err != nil {
		return nil, err
	}
	if err := checkACLs(j, q, who); err != nil {
		return nil, err
	}
	qtype, _ := q.Get(proto.AttrQueueTypeQ)
	if qtype == "Route" {
		return v.routeOrHold(j, q, who, now)
	}
	if qtype != "Execution" {
		return nil, proto.Errorf(proto.PBSE_QUENOEN, "queue %s has no queue_type", q.Name)
	}
	c := j.Clone()
	if err := v.ApplyResources(c, q); err != nil {
		return nil, err
	}
	// After the defaults: the limits on resources judge the request as
	// it will be stored.
	if err := v.checkEntityLimits(c, q); err != nil {
		return nil, err
	}
	c.Enqueue(q.Name, "Execution", now) // the caller tells the scheduler (eligible)
	return c, nil
}

// routeOrHold tries each destination of route queue q in order. If one
// accepts, the job goes there. If every refusal is permanent (resource
// limits, access), the submission fails; otherwise the job waits in the
// route queue and the router retries it.
func (v View) routeOrHold(j *model.Job, q *model.Object, who Caller, now int64) (*model.Job, error) {
	if q.Bool(proto.AttrStarted) && v.Routable(j, q, now) {
		placed, permanent, err := v.Route(j, q, who, now)
		if err == nil {
			return placed, nil
		}
		if permanent {
			return nil, err
		}
	}
	c := j.Clone()
	c.Enqueue(q.Name, "Route", now)
	return c, nil
}

// Routable says whether the router may move j now: held and waiting jobs
// only when the route queue allows it.
func (v View) Routable(j *model.Job, q *model.Object, now int64) bool {
	if j.Holds != "" && !q.Bool(proto.AttrRouteHeldJobs) {
		return false
	}
	if j.ExecutionTime > now && !q.Bool(proto.AttrRouteWaitingJobs) {
		return false
	}
	return true
}

// Route offers j to the destinations of route queue q (the router, and
// Enqueue into a started route queue). permanent is true when every
// destination refused for a reason waiting will not fix.
func (v View) Route(j *model.Job, q *model.Object, who Caller, now int64) (placed *model.Job, permanent bool, err error) {
	dests, _ := q.Get(proto.AttrRouteDestinations)
	permanent = true
	var last error
	for _, d := range model.SplitList(dests) {
		if i := strings.IndexByte(d, '@'); i >= 0 {
			d = d[:i]
		}
		dq, ok := v.Queues.Get(d)
		if !ok || d == q.Name {
			continue
		}
		placed, err := v.Enqueue(j, dq, who, true, now)
		if err == nil {
			return placed, false, nil
		}
		last = err
		switch proto.CodeOf(err) {
		case proto.PBSE_MAXQUED, proto.PBSE_QUNOENB, proto.PBSE_QUENOEN:
			permanent = false
		}
	}
	if last == nil {
		return nil, false, proto.Errorf(proto.PBSE_ROUTEREJ, "route queue %s has no usable destination", q.Name)
	}
	return nil, permanent, proto.Errorf(proto.PBSE_ROUTEREJ, "(%v)", last)
}

// checkCounts enforces max_queuable and max_user_queuable of the queue
// and the server (mu held).
func (v View) checkCounts(j *model.Job, q *model.Object) error {
	user := j.User()
	if max, ok := q.Long(proto.AttrMaxQueuable); ok && int64(v.Jobs.Queued(q.Name)) >= max {
		return proto.Errorf(proto.PBSE_MAXQUED, "%s", q.Name)
	}
	if max, ok := q.Long(proto.AttrMaxUserQueuable); ok && int64(v.Jobs.QueuedBy(q.Name, user)) >= max {
		return &proto.Error{Code: proto.PBSE_MAXQUED, Text: "Maximum number of jobs for user " + user + " already in queue " + q.Name}
	}
	if max, ok := v.Server.Long(proto.AttrMaxQueuable); ok && int64(v.Jobs.Unfinished()) >= max {
		return &proto.Error{Code: proto.PBSE_MAXQUED, Text: "Maximum number of jobs already in complex"}
	}
	if max, ok := v.Server.Long(proto.AttrMaxUserQueuable); ok && int64(v.Jobs.QueuedBy("", user)) >= max {
		return &proto.Error{Code: proto.PBSE_MAXQUED, Text: "Maximum number of jobs for user " + user + " already in complex"}
	}
	return nil
}

// checkACLs enforces the queue's host, user and group access lists.
func checkACLs(j *model.Job, q *model.Object, who Caller) error {
	if q.Bool(proto.AttrAclHostEnable) {
		hosts, _ := q.Get(proto.AttrAclHosts)
		if !model.MatchesHostList(hosts, j.SubmitHost) {
			return proto.Errorf(proto.PBSE_BADHOST, "%s", j.SubmitHost)
		}
	}
	if q.Bool(proto.AttrAclUserEnable) {
		users, _ := q.Get(proto.AttrAclUsers)
		if !model.MatchesUserList(users, j.User(), j.SubmitHost) {
			return proto.Errorf(proto.PBSE_PERM, "user %s is not in acl_users of queue %s", j.User(), q.Name)
		}
	}
	if q.Bool(proto.AttrAclGroupEnable) {
		groups, _ := q.Get(proto.AttrAclGroups)
		allowed := false
		for _, g := range model.SplitList(groups) {
			if g == j.EGroup || g == j.GroupList {
				allowed = true
			}
			for _, mine := range who.Groups {
				if g == mine {
					allowed = true
				}
			}
		}
		if !allowed {
			return proto.Errorf(proto.PBSE_PERM, "group %s is not in acl_groups of queue %s", j.EGroup, q.Name)
		}
	}
	return nil
}

// ApplyResources applies resources_default (queue, then server), derives
// the select and its totals, applies default_chunk, and checks the queue's
// resources_min/max and the server's resources_max (reference §4.4).
func (v View) ApplyResources(j *model.Job, q *model.Object) error {
	rl, err := v.NormalResources(j.ResourceList, q)
	if err != nil {
		return err
	}
	if err := v.CheckResourceLimits(rl, q); err != nil {
		return err
	}
	j.ResourceList = rl
	return nil
}

// NormalResources is a job's resource list as an execution queue q would
// store it (mu held): defaults applied (q's when q is not nil, then the
// server's), `nodes` turned into a select, default_chunk in every chunk,
// the select's totals (ncpus, mem, nodect, ...) derived, and a place.
// rl itself is not changed.
func (v View) NormalResources(rl model.Resources, q *model.Object) (model.Resources, error) {
	rl = rl.Clone()
	sources := []*model.Object{v.Server}
	if q != nil {
		sources = []*model.Object{q, v.Server}
	}
	_, hasSelect := rl.Get(proto.ResSelect)
	nodes, hasNodes := rl.Get(proto.ResNodes)
	if hasSelect {
		for _, p := range rl {
			if d := v.Table.Lookup(p.Name); d.Chunk && p.Name != proto.ResSelect {
				return nil, proto.Errorf(proto.PBSE_INVALJOBRESC, "%s", p.Name)
			}
		}
	}
	stf := rl.ShrinkToFit()
	for _, src := range sources {
		for name, val := range src.Resources[proto.AttrResourcesDefault] {
			if _, ok := rl.Get(name); ok {
				continue
			}
			if stf && name == proto.ResWalltime {
				continue // its start chooses it
			}
			if (hasSelect || hasNodes) && v.Table.Lookup(name).Chunk {
				continue // the select decides host-level amounts
			}
			rl = rl.Set(name, val)
		}
	}
	var sel resc.Select
	var err error
	switch {
	case hasSelect:
		text, _ := rl.Get(proto.ResSelect)
		sel, err = v.Table.ParseSelect(text)
	case hasNodes:
		sel, err = resc.ParseNodes(nodes)
		if _, ok := rl.Get(proto.ResPlace); !ok && err == nil {
			rl = rl.Set(proto.ResPlace, "scatter")
		}
	default:
		var pairs []resc.Pair
		for _, p := range rl {
			if d := v.Table.Lookup(p.Name); d.Chunk {
				pairs = append(pairs, p)
			}
		}
		sel = resc.Select{v.Table.NewChunk(1, pairs)}
		if _, ok := rl.Get(proto.ResPlace); !ok {
			rl = rl.Set(proto.ResPlace, "pack")
		}
	}
	if err != nil {
		return nil, proto.Errorf(proto.PBSE_BADATVAL, "Resource_List: %v", err)
	}
	for _, src := range sources {
		for name, val := range src.Resources[proto.AttrDefaultChunk] {
			for i := range sel {
				sel[i] = sel[i].With(name, val)
			}
		}
	}
	rl = rl.Set(proto.ResSelect, sel.String())
	for name, total := range sel.Totals() {
		rl = rl.Set(name, total)
	}
	if _, ok := rl.Get(proto.ResPlace); !ok {
		rl = rl.Set(proto.ResPlace, "free")
	}
	return rl, nil
}

// CheckResourceLimits checks a normalised resource list against queue q's
// resources_min/max and the server's resources_max (mu held).
func (v View) CheckResourceLimits(rl model.Resources, q *model.Object) error {
	for _, lim := range []struct {
		obj  *model.Object
		attr string
		max  bool
	}{{q, proto.AttrResourcesMax, true}, {q, proto.AttrResourcesMin, false}, {v.Server, proto.AttrResourcesMax, true}} {
		for name, limit := range lim.obj.Resources[lim.attr] {
			asked, ok := rl.Get(name)
			if sv, stf := stfLimit(rl, name, lim.max); stf {
				asked, ok = sv, sv != ""
			}
			if !ok {
				continue
			}
			cmp, ordered := v.Table.Compare(name, asked, limit)
			if !ordered {
				continue
			}
			if (lim.max && cmp > 0) || (!lim.max && cmp < 0) {
				which := "max"
				if !lim.max {
					which = "min"
				}
				return proto.Errorf(proto.PBSE_EXCQRESC, "(%s.%s = %s, job requests %s)", "resources_"+which, name, limit, asked)
			}
		}
	}
	return nil
}

// checkArray checks a new array against max_array_size, the queue's
// then the server's (mu held).
func (v View) checkArray(j *model.Job, q *model.Object) error {
	if j.Array == nil {
		return nil
	}
	if j.Array.Indices.Empty() {
		return proto.Errorf(proto.PBSE_BADATVAL, "(max_run_subjobs is for job arrays: give -J too)")
	}
	n := j.Array.Indices.Count()
	for _, o := range []*model.Object{q, v.Server} {
		if limit, ok := o.Long(proto.AttrMaxArraySize); ok && int64(n) > limit {
			return proto.Errorf(proto.PBSE_MaxArraySize, "(%d subjobs; max_array_size of %s is %d)", n, o.Name, limit)
		}
	}
	if _, ok := v.Server.Long(proto.AttrMaxArraySize); !ok && n > model.DefaultMaxArraySize {
		return proto.Errorf(proto.PBSE_MaxArraySize, "(%d subjobs; max_array_size is %d unless the server sets it)", n, model.DefaultMaxArraySize)
	}
	return nil
}
