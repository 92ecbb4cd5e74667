package server

import (
	"strings"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Admission of a new job, in one place and one order (DESIGN §7):
//
//  1. the request: its attributes checked and parsed into a job
//     (parseSubmission); nothing shared is read;
//  2. submission filters, the destination queue's list then the server's
//     (filterSubmission), with no lock held: a filter may take seconds,
//     and other clients must not wait for it;
//  3. one commit (admitJob): root jobs and the script size, the destination
//     queue, then per queue (enqueue) enabled, from_route_only, the
//     max_queuable counts, the ACLs, resources_default and default_chunk,
//     and resources_min/max. Everything the filters saw is checked again
//     here against the state of the moment, since it may have changed
//     while they ran.
//
// A job the filters accepted and step 3 refuses is reverted with the
// filters, as a filter's own refusal is.

// submit validates and queues a new job; the id is returned only after the
// job and its script are durable.
func (s *Server) submit(who *caller, req *proto.SubmitRequest) (string, error) {
	priv := s.privilegeOf(who)
	base, err := parseSubmission(s.rt(), who, priv, req)
	if err != nil {
		return "", err
	}
	queueReq := strings.TrimSpace(req.Queue)
	if i := strings.IndexByte(queueReq, '@'); i >= 0 {
		queueReq = queueReq[:i]
	}
	filtered, err := s.filterSubmission(who, base, queueReq)
	if err != nil {
		return "", err
	}
	if filtered != nil {
		defer filtered.remove()
		base, queueReq = filtered.job, filtered.queue
	}
	s.resolveStageHosts(base.Stagein, base.Stageout) // before the lock: lookups may wait
	job, err := s.admitJob(who, priv, base, queueReq, req.Script, filtered.reserved())
	if err != nil {
		if filtered != nil {
			filtered.revert(s, "admission refused the job: "+err.Error())
		}
		return "", err
	}
	s.log.Info("job queued", "job", job.ID, "owner", job.Owner, "name", job.Name, "queue", job.Queue, "state", string(job.State))
	s.eligible(job)
	return job.ID, nil
}

func (s *Server) privilegeOf(who *caller) model.Privilege {
	mgr, op := s.privileges(who)
	return model.Privilege{Owner: true, Operator: op, Manager: mgr}
}

// parseSubmission turns the request into a job: attributes checked
// against who may set them, the owner and submission host from the
// caller's credentials.
func parseSubmission(rt *resc.Table, who *caller, priv model.Privilege, req *proto.SubmitRequest) (*model.Job, error) {
	base := &model.Job{
		Rerunable:  true,
		JoinPath:   "n",
		KeepFiles:  "n",
		MailPoints: "a",
		Checkpoint: "u",
		Project:    "_pbs_project_default",
	}
	for _, a := range req.Attrs {
		if a.Name == proto.AttrInteractive && a.Resource == "" {
			return nil, proto.Errorf(proto.PBSE_ATTRRO, "%s (an interactive job is submitted with qsub -I, which listens for it)", a.Name)
		}
		if err := model.SetJobAttr(rt, base, a, priv, model.AtSubmit); err != nil {
			return nil, err
		}
	}
	if base.Name == "" {
		base.Name = "STDIN"
	}
	if err := interactiveSession(base, req); err != nil {
		return nil, err
	}
	if err := checkShrinkToFit(rt, base.ResourceList, base.IsArray(), false); err != nil {
		return nil, err
	}
	if base.IsArray() && !base.Rerunable {
		// As OpenPBS: a subjob requeued from a failed node must run again.
		return nil, proto.Errorf(proto.PBSE_BADATVAL, "(a job array must be rerunnable: -r n is refused with -J)")
	}
	submitHost := who.host
	if h, ok := model.GetVar(base.VariableList, "PBS_O_HOST"); ok && h != "" && who.role != proto.RoleClient {
		submitHost = h
	}
	base.Owner = who.user + "@" + submitHost
	base.EUser = who.user
	base.EGroup = who.group
	base.UID, base.GID = who.uid, who.gid
	if err := runAs(base, *who); err != nil {
		return nil, err
	}
	base.SubmitHost = submitHost
	if _, ok := model.GetVar(base.VariableList, "PBS_O_HOST"); !ok {
		base.VariableList = model.SetVar(base.VariableList, "PBS_O_HOST", submitHost)
	}
	return base, nil
}

// interactiveSession takes qsub -I's session into the job. An interactive
// job is not rerunnable (its terminal cannot be given back) and is not
// an array (one terminal, one shell): a submission that asks for either
// is refused rather than changed behind the user's back.
func interactiveSession(base *model.Job, req *proto.SubmitRequest) error {
	in := req.Interactive
	if in == nil {
		return nil
	}
	if in.Port <= 0 || in.Port > 65535 || len(in.Cookie) != proto.InteractiveCookieLen {
		return proto.Errorf(proto.PBSE_BADATVAL, "(interactive: want qsub's port and a %d-byte secret)", proto.InteractiveCookieLen)
	}
	if in.Port < proto.MinInteractivePort {
		return proto.Errorf(proto.PBSE_BADATVAL, "(interactive: port %d is privileged; qsub -I listens on a port of %d or above)", in.Port, proto.MinInteractivePort)
	}
	if base.IsArray() {
		return proto.Errorf(proto.PBSE_BADATVAL, "(interactive and array job submission cannot be used together)")
	}
	for _, a := range req.Attrs {
		if a.Name == proto.AttrRerunable && a.Resource == "" && base.Rerunable {
			return proto.Errorf(proto.PBSE_BADATVAL, "(interactive jobs are not rerunnable: -r y is refused with -I)")
		}
	}
	base.Rerunable = false
	base.Interactive = &proto.InteractiveSession{Port: in.Port, Cookie: append([]byte(nil), in.Cookie...)}
	return nil
}

// admitJob is step 3: it checks base against the state of the moment and
// stores it, all in one commit. seq is the id the filters saw (0: take
// the next one).
func (s *Server) admitJob(who *caller, priv model.Privilege, base *model.Job, queueReq string, script []byte, seq int64) (*model.Job, error) {
	var job *model.Job
	err := s.commit.Do(func(b *store.Batch) error {
		if base.UID == 0 || base.EUser == "root" {
			roots, _ := s.server.Get(proto.AttrAclRoots)
			if !matchesUserList(roots, "root", base.SubmitHost) {
				return proto.Errorf(proto.PBSE_BADUSER, "(root jobs run only when the server's acl_roots lists root@%s)", base.SubmitHost)
			}
		}
		if max, ok := s.server.Long(proto.AttrJobscriptMaxSize); ok && int64(len(script)) > max {
			return proto.NewError(proto.PBSE_JOBSCRIPTMAXSIZE)
		}
		qname := queueReq
		if qname == "" {
			qname, _ = s.server.Get(proto.AttrDefaultQueue)
			if qname == "" {
				return proto.NewError(proto.PBSE_QUENODFLT)
			}
		}
		q, ok := s.queues.Get(qname)
		if !ok {
			return proto.Errorf(proto.PBSE_UNKQUE, "%s", qname)
		}
		now := s.nowUnix()
		if seq == 0 {
			seq = s.nextSeq
		}
		if err := s.checkStageHosts(base); err != nil {
			return err
		}
		j := base.Clone()
		j.Seq = seq
		j.ID = s.idOf(j)
		j.QueueRank = seq
		j.Ctime, j.Qtime, j.Mtime = now, now, now
		j.VariableList = model.SetVar(j.VariableList, "PBS_O_QUEUE", qname)
		j.OutputPath = s.stdPath(j, j.OutputPath, 'o', who)
		j.ErrorPath = s.stdPath(j, j.ErrorPath, 'e', who)
		if err := checkResizeSignal(j); err != nil {
			return err
		}
		never, err := s.checkDepends(j, priv)
		if err != nil {
			return err
		}
		placed, err := s.enqueue(j, q, who, false, now)
		if err != nil {
			return err
		}
		if placed.HoldUntil > now && placed.Comment == "" {
			placed.Comment = heldUntilComment(placed.HoldUntil) // a filter's hold_until
		}
		// A reserved id may be below the next one already: others were
		// admitted while the filters ran.
		s.nextSeq = max(s.nextSeq, seq+1)
		b.PutJob(placed)
		b.PutScript(seq, script)
		b.SetNextSeq(s.nextSeq)
		s.jobs.Insert(placed)
		b.After(func() {
			s.account(accounting.Queued, placed, s.queuedRecord(placed))
			s.metrics.Submitted(placed.Queue)
		})
		s.indexDepends(placed)
		s.registerBefore(b, placed, now)
		if never != "" {
			// Its parent ended the wrong way already: the job is
			// deleted at once, as it would be had the parent ended a
			// moment later (qsub still prints its id).
			s.deleteUnmet(b, placed, never, now)
		}
		job = placed
		return nil
	})
	return job, err
}

// stdPath fills in the default output or error path: "host:dir/name.oSEQ"
// in PBS_O_WORKDIR, a given directory ending in '/' gets the default name
// inside it, and a path without host gets the submission host.
func (s *Server) stdPath(j *model.Job, given string, kind byte, who *caller) string {
	def := j.StdFileName(kind) // an array's subjobs each their own file, as OpenPBS names them
	host := j.SubmitHost
	p := given
	if p == "" {
		dir, ok := model.GetVar(j.VariableList, "PBS_O_WORKDIR")
		if !ok || dir == "" {
			dir = who.home
		}
		if dir == "" {
			dir = "/tmp"
		}
		return host + ":" + strings.TrimRight(dir, "/") + "/" + def
	}
	if h, rest, ok := strings.Cut(p, ":"); ok && !strings.Contains(h, "/") {
		host, p = h, rest
	}
	if strings.HasSuffix(p, "/") {
		p += def
	}
	return host + ":" + p
}

// enqueue admits j into queue q: a route queue forwards it to the first
// destination that accepts it; an execution queue checks its limits and
// ACLs, applies defaults and derives the job's select. It returns the job
// as placed (a modified copy); j itself is not changed. mu is held.
func (s *Server) enqueue(j *model.Job, q *model.Object, who *caller, routed bool, now int64) (*model.Job, error) {
	if !q.Bool(proto.AttrEnabled) {
		return nil, proto.Errorf(proto.PBSE_QUNOENB, "%s", q.Name)
	}
	if !routed && q.Bool(proto.AttrFromRouteOnly) {
		return nil, proto.Errorf(proto.PBSE_QACESS, "%s accepts jobs only from route queues", q.Name)
	}
	if err := s.checkCounts(j, q); err != nil {
		return nil, err
	}
	if err := s.checkArray(j, q); err != nil {
		return nil, err
	}
	if err := checkACLs(j, q, who); err != nil {
		return nil, err
	}
	qtype, _ := q.Get(proto.AttrQueueTypeQ)
	if qtype == "Route" {
		return s.routeOrHold(j, q, who, now)
	}
	if qtype != "Execution" {
		return nil, proto.Errorf(proto.PBSE_QUENOEN, "queue %s has no queue_type", q.Name)
	}
	c := j.Clone()
	if err := s.applyResources(c, q); err != nil {
		return nil, err
	}
	// After the defaults: the limits on resources judge the request as
	// it will be stored.
	if err := s.checkEntityLimits(c, q); err != nil {
		return nil, err
	}
	c.Enqueue(q.Name, "Execution", now) // the caller tells the scheduler (eligible)
	return c, nil
}

// routeOrHold tries each destination of route queue q in order. If one
// accepts, the job goes there. If every refusal is permanent (resource
// limits, access), the submission fails; otherwise the job waits in the
// route queue and the router retries it.
func (s *Server) routeOrHold(j *model.Job, q *model.Object, who *caller, now int64) (*model.Job, error) {
	if q.Bool(proto.AttrStarted) && s.routable(j, q, now) {
		placed, permanent, err := s.route(j, q, who, now)
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

// routable says whether the router may move j now: held and waiting jobs
// only when the route queue allows it.
func (s *Server) routable(j *model.Job, q *model.Object, now int64) bool {
	if j.Holds != "" && !q.Bool(proto.AttrRouteHeldJobs) {
		return false
	}
	if j.ExecutionTime > now && !q.Bool(proto.AttrRouteWaitingJobs) {
		return false
	}
	return true
}

// route offers j to the destinations of q. permanent is true when every
// destination refused for a reason waiting will not fix.
func (s *Server) route(j *model.Job, q *model.Object, who *caller, now int64) (placed *model.Job, permanent bool, err error) {
	dests, _ := q.Get(proto.AttrRouteDestinations)
	permanent = true
	var last error
	for _, d := range model.SplitList(dests) {
		if i := strings.IndexByte(d, '@'); i >= 0 {
			d = d[:i]
		}
		dq, ok := s.queues.Get(d)
		if !ok || d == q.Name {
			continue
		}
		placed, err := s.enqueue(j, dq, who, true, now)
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
func (s *Server) checkCounts(j *model.Job, q *model.Object) error {
	user := j.User()
	if max, ok := q.Long(proto.AttrMaxQueuable); ok && int64(s.jobs.Queued(q.Name)) >= max {
		return proto.Errorf(proto.PBSE_MAXQUED, "%s", q.Name)
	}
	if max, ok := q.Long(proto.AttrMaxUserQueuable); ok && int64(s.jobs.QueuedBy(q.Name, user)) >= max {
		return &proto.Error{Code: proto.PBSE_MAXQUED, Text: "Maximum number of jobs for user " + user + " already in queue " + q.Name}
	}
	if max, ok := s.server.Long(proto.AttrMaxQueuable); ok && int64(s.jobs.Unfinished()) >= max {
		return &proto.Error{Code: proto.PBSE_MAXQUED, Text: "Maximum number of jobs already in complex"}
	}
	if max, ok := s.server.Long(proto.AttrMaxUserQueuable); ok && int64(s.jobs.QueuedBy("", user)) >= max {
		return &proto.Error{Code: proto.PBSE_MAXQUED, Text: "Maximum number of jobs for user " + user + " already in complex"}
	}
	return nil
}

// checkACLs enforces the queue's host, user and group access lists.
func checkACLs(j *model.Job, q *model.Object, who *caller) error {
	if q.Bool(proto.AttrAclHostEnable) {
		hosts, _ := q.Get(proto.AttrAclHosts)
		if !matchesHostList(hosts, j.SubmitHost) {
			return proto.Errorf(proto.PBSE_BADHOST, "%s", j.SubmitHost)
		}
	}
	if q.Bool(proto.AttrAclUserEnable) {
		users, _ := q.Get(proto.AttrAclUsers)
		if !matchesUserList(users, j.User(), j.SubmitHost) {
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
			for _, mine := range who.groups {
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

func matchesHostList(list, host string) bool {
	return matchesUserList(strings.ReplaceAll(","+list, ",", ",*@"), "x", host)
}

// applyResources applies resources_default (queue, then server), derives
// the select and its totals, applies default_chunk, and checks the queue's
// resources_min/max and the server's resources_max (reference §4.4).
func (s *Server) applyResources(j *model.Job, q *model.Object) error {
	rl, err := s.normalResources(j.ResourceList, q)
	if err != nil {
		return err
	}
	if err := s.checkResourceLimits(rl, q); err != nil {
		return err
	}
	j.ResourceList = rl
	return nil
}

// normalResources is a job's resource list as an execution queue q would
// store it (mu held): defaults applied (q's when q is not nil, then the
// server's), `nodes` turned into a select, default_chunk in every chunk,
// the select's totals (ncpus, mem, nodect, ...) derived, and a place.
// rl itself is not changed.
func (s *Server) normalResources(rl model.Resources, q *model.Object) (model.Resources, error) {
	rl = rl.Clone()
	sources := []*model.Object{s.server}
	if q != nil {
		sources = []*model.Object{q, s.server}
	}
	_, hasSelect := rl.Get(proto.ResSelect)
	nodes, hasNodes := rl.Get(proto.ResNodes)
	if hasSelect {
		for _, p := range rl {
			if d := s.rt().Lookup(p.Name); d.Chunk && p.Name != proto.ResSelect {
				return nil, proto.Errorf(proto.PBSE_INVALJOBRESC, "%s", p.Name)
			}
		}
	}
	stf := rl.ShrinkToFit()
	for _, src := range sources {
		for name, v := range src.Resources[proto.AttrResourcesDefault] {
			if _, ok := rl.Get(name); ok {
				continue
			}
			if stf && name == proto.ResWalltime {
				continue // its start chooses it
			}
			if (hasSelect || hasNodes) && s.rt().Lookup(name).Chunk {
				continue // the select decides host-level amounts
			}
			rl = rl.Set(name, v)
		}
	}
	var sel resc.Select
	var err error
	switch {
	case hasSelect:
		v, _ := rl.Get(proto.ResSelect)
		sel, err = s.rt().ParseSelect(v)
	case hasNodes:
		sel, err = resc.ParseNodes(nodes)
		if _, ok := rl.Get(proto.ResPlace); !ok && err == nil {
			rl = rl.Set(proto.ResPlace, "scatter")
		}
	default:
		var pairs []resc.Pair
		for _, p := range rl {
			if d := s.rt().Lookup(p.Name); d.Chunk {
				pairs = append(pairs, p)
			}
		}
		sel = resc.Select{s.rt().NewChunk(1, pairs)}
		if _, ok := rl.Get(proto.ResPlace); !ok {
			rl = rl.Set(proto.ResPlace, "pack")
		}
	}
	if err != nil {
		return nil, proto.Errorf(proto.PBSE_BADATVAL, "Resource_List: %v", err)
	}
	for _, src := range sources {
		for name, v := range src.Resources[proto.AttrDefaultChunk] {
			for i := range sel {
				sel[i] = sel[i].With(name, v)
			}
		}
	}
	rl = rl.Set(proto.ResSelect, sel.String())
	for name, v := range sel.Totals() {
		rl = rl.Set(name, v)
	}
	if _, ok := rl.Get(proto.ResPlace); !ok {
		rl = rl.Set(proto.ResPlace, "free")
	}
	return rl, nil
}

// checkResourceLimits checks a normalised resource list against queue q's
// resources_min/max and the server's resources_max (mu held).
func (s *Server) checkResourceLimits(rl model.Resources, q *model.Object) error {
	for _, lim := range []struct {
		obj  *model.Object
		attr string
		max  bool
	}{{q, proto.AttrResourcesMax, true}, {q, proto.AttrResourcesMin, false}, {s.server, proto.AttrResourcesMax, true}} {
		for name, limit := range lim.obj.Resources[lim.attr] {
			v, ok := rl.Get(name)
			if sv, stf := stfLimit(rl, name, lim.max); stf {
				v, ok = sv, sv != ""
			}
			if !ok {
				continue
			}
			cmp, ordered := s.rt().Compare(name, v, limit)
			if !ordered {
				continue
			}
			if (lim.max && cmp > 0) || (!lim.max && cmp < 0) {
				which := "max"
				if !lim.max {
					which = "min"
				}
				return proto.Errorf(proto.PBSE_EXCQRESC, "(%s.%s = %s, job requests %s)", "resources_"+which, name, limit, v)
			}
		}
	}
	return nil
}
