package server

import (
	"strconv"
	"strings"
	"time"

	"gopbs/internal/accounting"
	"gopbs/internal/model"
	"gopbs/internal/resc"
	"gopbs/internal/store"
	"gopbs/proto"
)

// ExitDeleted is the Exit_status given to a job deleted before it ran:
// 256 + SIGTERM, as for a running job killed by qdel, so that workflow
// tools that wait for an exit status see a failure.
const ExitDeleted = 271

// defaultRetention keeps finished jobs visible when neither
// job_history_enable nor keep_completed says otherwise, long enough for
// workflow tools that poll for the exit status.
const defaultRetention = 10 * time.Minute

// submit validates and queues a new job; the id is returned only after the
// job and its script are durable.
func (s *Server) submit(who *caller, req *proto.SubmitRequest) (string, error) {
	mgr, op := s.privileges(who)
	priv := model.Privilege{Owner: true, Operator: op, Manager: mgr}
	base := &model.Job{
		Rerunable:  true,
		JoinPath:   "n",
		KeepFiles:  "n",
		MailPoints: "a",
		Checkpoint: "u",
		Project:    "_pbs_project_default",
	}
	for _, a := range req.Attrs {
		switch a.Name {
		case proto.AttrInteractive:
			return "", proto.Errorf(proto.PBSE_NOSUP, "interactive jobs are not supported")
		case proto.AttrArrayIndices:
			return "", proto.Errorf(proto.PBSE_NOSUP, "job arrays are not supported")
		}
		if err := model.SetJobAttr(base, a, priv, model.AtSubmit); err != nil {
			return "", err
		}
	}
	if base.Name == "" {
		base.Name = "STDIN"
	}
	script := req.Script
	submitHost := who.host
	if h, ok := model.GetVar(base.VariableList, "PBS_O_HOST"); ok && h != "" && who.role != proto.RoleClient {
		submitHost = h
	}
	base.Owner = who.user + "@" + submitHost
	base.EUser = who.user
	base.EGroup = who.group
	base.UID, base.GID = who.uid, who.gid
	base.SubmitHost = submitHost
	if _, ok := model.GetVar(base.VariableList, "PBS_O_HOST"); !ok {
		base.VariableList = model.SetVar(base.VariableList, "PBS_O_HOST", submitHost)
	}
	queueReq := strings.TrimSpace(req.Queue)
	if i := strings.IndexByte(queueReq, '@'); i >= 0 {
		queueReq = queueReq[:i]
	}

	var job *model.Job
	err := s.commit.Do(func(b *store.Batch) error {
		if base.UID == 0 || base.EUser == "root" {
			roots, _ := s.server.Get(proto.AttrAclRoots)
			if !matchesUserList(roots, "root", submitHost) {
				return proto.Errorf(proto.PBSE_BADUSER, "(root jobs run only when the server's acl_roots lists root@%s)", submitHost)
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
		q, ok := s.queues[qname]
		if !ok {
			return proto.Errorf(proto.PBSE_UNKQUE, "%s", qname)
		}
		now := s.nowUnix()
		seq := s.nextSeq
		j := base.Clone()
		j.Seq = seq
		j.ID = s.jobID(seq)
		j.QueueRank = seq
		j.Ctime, j.Qtime, j.Mtime = now, now, now
		j.VariableList = model.SetVar(j.VariableList, "PBS_O_QUEUE", qname)
		j.OutputPath = s.stdPath(j, j.OutputPath, 'o', who)
		j.ErrorPath = s.stdPath(j, j.ErrorPath, 'e', who)
		placed, err := s.enqueue(j, q, who, false, now)
		if err != nil {
			return err
		}
		s.nextSeq = seq + 1
		b.PutJob(placed)
		b.PutScript(seq, script)
		b.SetNextSeq(s.nextSeq)
		s.insertJob(placed)
		job = placed
		return nil
	})
	if err != nil {
		return "", err
	}
	s.log.Info("job queued", "job", job.ID, "owner", job.Owner, "name", job.Name, "queue", job.Queue, "state", string(job.State))
	s.eligible(job)
	s.account(accounting.Queued, job, s.queuedRecord(job))
	return job.ID, nil
}

// stdPath fills in the default output or error path: "host:dir/name.oSEQ"
// in PBS_O_WORKDIR, a given directory ending in '/' gets the default name
// inside it, and a path without host gets the submission host.
func (s *Server) stdPath(j *model.Job, given string, kind byte, who *caller) string {
	def := j.Name + "." + string(kind) + strconv.FormatInt(j.Seq, 10)
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
	c.Queue = q.Name
	c.QueueType = "Execution"
	c.Qtime = now
	c.State = model.StateTransit
	c.EvalState(now)
	if c.State == model.StateQueued && c.Etime == 0 {
		c.Etime = now
	}
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
	c.Queue = q.Name
	c.QueueType = "Route"
	c.Qtime = now
	c.State = model.StateTransit
	c.EvalState(now)
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
		dq, ok := s.queues[d]
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
	if max, ok := q.Long(proto.AttrMaxQueuable); ok && int64(s.counts.queued(q.Name)) >= max {
		return proto.Errorf(proto.PBSE_MAXQUED, "%s", q.Name)
	}
	if max, ok := q.Long(proto.AttrMaxUserQueuable); ok && int64(s.counts.byQueueUser[q.Name][user]) >= max {
		return &proto.Error{Code: proto.PBSE_MAXQUED, Text: "Maximum number of jobs for user " + user + " already in queue " + q.Name}
	}
	if max, ok := s.server.Long(proto.AttrMaxQueuable); ok && int64(s.counts.unfinished) >= max {
		return &proto.Error{Code: proto.PBSE_MAXQUED, Text: "Maximum number of jobs already in complex"}
	}
	if max, ok := s.server.Long(proto.AttrMaxUserQueuable); ok && int64(s.counts.byUser[user]) >= max {
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
	rl := j.ResourceList
	_, hasSelect := rl.Get(proto.ResSelect)
	nodes, hasNodes := rl.Get(proto.ResNodes)
	if hasSelect {
		for _, p := range rl {
			if d := resc.Lookup(p.Name); d.Chunk && p.Name != proto.ResSelect {
				return proto.Errorf(proto.PBSE_INVALJOBRESC, "%s", p.Name)
			}
		}
	}
	for _, src := range []*model.Object{q, s.server} {
		for name, v := range src.Resources[proto.AttrResourcesDefault] {
			if _, ok := rl.Get(name); ok {
				continue
			}
			if (hasSelect || hasNodes) && resc.Lookup(name).Chunk {
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
		sel, err = resc.ParseSelect(v)
	case hasNodes:
		sel, err = resc.ParseNodes(nodes)
		if _, ok := rl.Get(proto.ResPlace); !ok && err == nil {
			rl = rl.Set(proto.ResPlace, "scatter")
		}
	default:
		chunk := resc.Chunk{Count: 1}
		for _, p := range rl {
			if d := resc.Lookup(p.Name); d.Chunk {
				chunk.Resources = append(chunk.Resources, p)
			}
		}
		sel = resc.Select{chunk}
		if _, ok := rl.Get(proto.ResPlace); !ok {
			rl = rl.Set(proto.ResPlace, "pack")
		}
	}
	if err != nil {
		return proto.Errorf(proto.PBSE_BADATVAL, "Resource_List: %v", err)
	}
	for _, src := range []*model.Object{q, s.server} {
		for name, v := range src.Resources[proto.AttrDefaultChunk] {
			for i := range sel {
				if _, ok := sel[i].Get(name); !ok {
					sel[i].Resources = append(sel[i].Resources, resc.Pair{Name: name, Value: v})
				}
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
	for _, lim := range []struct {
		obj  *model.Object
		attr string
		max  bool
	}{{q, proto.AttrResourcesMax, true}, {q, proto.AttrResourcesMin, false}, {s.server, proto.AttrResourcesMax, true}} {
		for name, limit := range lim.obj.Resources[lim.attr] {
			v, ok := rl.Get(name)
			if !ok {
				continue
			}
			cmp, ordered := resc.Compare(name, v, limit)
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
	j.ResourceList = rl
	return nil
}

// visibleTo says whether who may see j.
func (s *Server) visibleTo(who *caller, j *model.Job, privileged bool) bool {
	if privileged || j.User() == who.user || s.server.Bool(proto.AttrQueryOtherJobs) {
		return true
	}
	return false
}

// statusJobs answers qstat.
func (s *Server) statusJobs(who *caller, req *proto.StatusRequest) (*proto.StatusReply, error) {
	mgr, op := s.privileges(who)
	priv := mgr || op
	want := model.WantSet(req.Attrs)
	s.mu.RLock()
	defer s.mu.RUnlock()
	reply := &proto.StatusReply{Version: s.counts.version, Epoch: s.epoch}
	render := model.NewJobRenderer(want)
	incremental := req.Since > 0 && req.Epoch == s.epoch && len(req.IDs) == 0
	add := func(j *model.Job) {
		if incremental {
			reply.Live = append(reply.Live, j.ID)
			if j.Version <= req.Since {
				return
			}
		}
		reply.Objects = append(reply.Objects, proto.Status{Name: j.ID, Attrs: render.Render(j)})
	}
	all := func(queue string) {
		for _, j := range s.jobList {
			if (queue == "" || j.Queue == queue) && (req.History || !j.Finished()) && s.visibleTo(who, j, priv) {
				add(j)
			}
		}
	}
	if len(req.IDs) == 0 {
		all("")
		return reply, nil
	}
	for _, raw := range req.IDs {
		id := strings.TrimSpace(raw)
		if _, isJob := model.ParseJobSeq(id); isJob {
			j, err := s.lookupJob(id)
			switch {
			case err != nil:
				reply.Errors = append(reply.Errors, objErr(raw, err))
			case j.Finished() && !req.History:
				reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_HISTJOBID, Text: proto.PBSE_HISTJOBID.Message()})
			case !s.visibleTo(who, j, priv):
				reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_PERM, Text: proto.PBSE_PERM.Message()})
			default:
				add(j)
			}
			continue
		}
		queue, _, _ := strings.Cut(id, "@")
		if queue == "" {
			all("")
			continue
		}
		if _, ok := s.queues[queue]; !ok {
			reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_UNKQUE, Text: proto.PBSE_UNKQUE.Message()})
			continue
		}
		all(queue)
	}
	return reply, nil
}

func objErr(name string, err error) proto.ObjectError {
	code := proto.CodeOf(err)
	return proto.ObjectError{Name: name, Code: code, Text: err.Error()}
}

// modifiableJob finds the unfinished job id that who may change (as its
// owner, an operator or a manager) and returns it with who's privilege.
// mu is held. mgr and op come from privileges, which must be called before
// entering a commit (it takes the read lock the committer holds).
func (s *Server) modifiableJob(who *caller, id string, mgr, op bool) (*model.Job, model.Privilege, error) {
	j, err := s.lookupJob(id)
	if err != nil {
		return nil, model.Privilege{}, err
	}
	if j.Finished() {
		return nil, model.Privilege{}, proto.NewError(proto.PBSE_HISTJOBID)
	}
	priv := model.Privilege{Owner: j.User() == who.user, Operator: op, Manager: mgr}
	if !priv.Owner && !priv.Operator && !priv.Manager {
		return nil, priv, proto.NewError(proto.PBSE_PERM)
	}
	return j, priv, nil
}

// jobRequest handles delete, hold, release, run, signal and rerun.
func (s *Server) jobRequest(who *caller, t proto.MsgType, req *proto.JobRequest) error {
	switch t {
	case proto.MsgRerunJob:
		return s.rerunJob(who, req.JobID, req.Extra == "force")
	case proto.MsgDeleteJob:
		return s.deleteJob(who, req.JobID, req.Extra)
	case proto.MsgHoldJob:
		return s.holdJob(who, req.JobID, req.Extra, true)
	case proto.MsgReleaseJob:
		return s.holdJob(who, req.JobID, req.Extra, false)
	case proto.MsgRunJob:
		return s.runJob(who, req.JobID, req.Extra)
	case proto.MsgSignalJob:
		return s.signalJob(who, req.JobID, req.Extra)
	}
	return proto.NewError(proto.PBSE_UNKREQ)
}

// retention is how long finished jobs stay visible (mu held).
func (s *Server) retention() time.Duration {
	if s.server.Bool(proto.AttrJobHistoryEnable) {
		if v, ok := s.server.Get(proto.AttrJobHistoryDuration); ok {
			if secs, err := resc.ParseDuration(v); err == nil {
				return time.Duration(secs) * time.Second
			}
		}
		return 14 * 24 * time.Hour
	}
	if n, ok := s.server.Long(proto.AttrKeepCompleted); ok {
		return time.Duration(n) * time.Second
	}
	return defaultRetention
}

// finish moves j to history (mu held, inside a commit): state F with the
// given substate and exit status, or removal when history is not kept.
func (s *Server) finish(b *store.Batch, j *model.Job, substate, exit int, comment string, now int64) {
	s.updateJob(j, func() {
		j.State = model.StateFinished
		j.Substate = substate
		j.Suspended = false
		j.SetExit(exit)
		j.HistoryTime = now
		j.Obittime = now
		if comment != "" {
			j.Comment = comment
		}
	})
	if s.retention() <= 0 {
		s.removeJob(j)
		b.DeleteJob(j.Seq)
		return
	}
	b.PutJob(j)
}

func (s *Server) deleteJob(who *caller, id, extra string) error {
	mgr, op := s.privileges(who)
	var deleted, running *model.Job
	err := s.commit.Do(func(b *store.Batch) error {
		j, _, err := s.modifiableJob(who, id, mgr, op)
		if err != nil {
			return err
		}
		if j.Active() {
			running = j
			return nil
		}
		comment := "Job deleted by " + who.user + "@" + who.host
		if who.role == proto.RoleSched && j.Comment != "" {
			comment = "" // keep the scheduler's reason
		}
		s.finish(b, j, model.SubTerminated, ExitDeleted, comment, s.nowUnix())
		deleted = j
		return nil
	})
	if err != nil {
		return err
	}
	if running != nil {
		return s.deleteRunning(who, running.Seq, extra == "force")
	}
	s.log.Info("job deleted", "job", deleted.ID, "by", who.user+"@"+who.host)
	s.account(accounting.Deleted, deleted, []accounting.KV{{Key: "requestor", Value: who.user + "@" + who.host}})
	return nil
}

func (s *Server) holdJob(who *caller, id, types string, hold bool) error {
	if types == "" {
		types = "u"
	}
	holds, ok := model.NormalizeHolds(types)
	if !ok || holds == "" {
		return proto.Errorf(proto.PBSE_BADATVAL, "hold type %q (want letters of u, o, s)", types)
	}
	mgr, op := s.privileges(who)
	return s.commit.Do(func(b *store.Batch) error {
		j, priv, err := s.modifiableJob(who, id, mgr, op)
		if err != nil {
			return err
		}
		if !model.HoldAllowed(holds, priv.Owner, priv.Operator, priv.Manager) {
			return proto.NewError(proto.PBSE_PERM)
		}
		if j.Active() {
			return proto.NewError(proto.PBSE_BADSTATE)
		}
		now := s.nowUnix()
		s.updateJob(j, func() {
			if hold {
				j.Holds = model.AddHolds(j.Holds, holds)
			} else {
				j.Holds = model.RemoveHolds(j.Holds, holds)
			}
			j.EvalState(now)
			if j.State == model.StateQueued && j.Etime == 0 {
				j.Etime = now
			}
			if j.State != model.StateQueued {
				j.Etime = 0
			}
		})
		b.PutJob(j)
		return nil
	})
}

// alterJob applies qalter attributes to a copy, re-checks queue limits when
// resources change, and swaps the copy in.
func (s *Server) alterJob(who *caller, req *proto.AlterRequest) error {
	res, err := s.alterJobs(who, []proto.AlterRequest{*req})
	if err != nil {
		return err
	}
	if r := res.Results[0]; r.Code != proto.PBSE_NONE {
		return &proto.Error{Code: r.Code, Text: r.Text}
	}
	return nil
}

// alterJobs applies several alterations in one commit; each succeeds or
// fails on its own.
func (s *Server) alterJobs(who *caller, reqs []proto.AlterRequest) (*proto.AlterJobsReply, error) {
	mgr, op := s.privileges(who)
	reply := &proto.AlterJobsReply{Results: make([]proto.ObjectError, len(reqs))}
	var eligible []*model.Job
	err := s.commit.Do(func(b *store.Batch) error {
		now := s.nowUnix()
		for i := range reqs {
			reply.Results[i].Name = reqs[i].JobID
			j, err := s.alterOne(who, &reqs[i], mgr, op, now)
			if err != nil {
				pe := toPBSE(err)
				reply.Results[i].Code, reply.Results[i].Text = pe.Code, pe.Error()
				continue
			}
			b.PutJob(j.job)
			if j.nowEligible {
				eligible = append(eligible, j.job)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, j := range eligible {
		s.eligible(j)
	}
	return reply, nil
}

type altered struct {
	job         *model.Job
	nowEligible bool
}

// alterOne changes one job (mu held, inside a commit).
func (s *Server) alterOne(who *caller, req *proto.AlterRequest, mgr, op bool, now int64) (altered, error) {
	j, priv, err := s.modifiableJob(who, req.JobID, mgr, op)
	if err != nil {
		return altered{}, err
	}
	c := j.Clone()
	resourcesChanged := false
	for _, a := range req.Attrs {
		if a.Name == proto.AttrResourceList {
			resourcesChanged = true
		}
		if err := model.SetJobAttr(c, a, priv, model.AtAlter); err != nil {
			return altered{}, err
		}
	}
	if resourcesChanged && c.QueueType == "Execution" {
		c.ResourceList = rederivable(c.ResourceList, req.Attrs)
		if err := s.applyResources(c, s.queues[c.Queue]); err != nil {
			return altered{}, err
		}
	}
	c.EvalState(now)
	if c.State == model.StateQueued && c.Etime == 0 {
		c.Etime = now
	}
	c.Mtime = now
	wasQueued := j.State == model.StateQueued
	s.counts.remove(j)
	*j = *c
	s.counts.add(j)
	return altered{job: j, nowEligible: !wasQueued}, nil
}

// eligible raises a NEW event when j is queued in an execution queue: a
// job the scheduler may now consider. It reads two fields a concurrent
// commit may change, so it takes the read lock.
func (s *Server) eligible(j *model.Job) {
	s.mu.RLock()
	ok := j.State == model.StateQueued && j.QueueType == "Execution"
	s.mu.RUnlock()
	if ok {
		s.schedEvent(proto.SchedNew)
	}
}

// rederivable prepares an altered resource list for applyResources. The
// host-level totals next to a select were derived from it, so they are
// dropped and derived again; when qalter changed a host-level amount
// (-l ncpus=4) rather than the select, the select is rebuilt from the
// job-wide amounts instead.
func rederivable(rl model.Resources, altered []proto.Attr) model.Resources {
	selectAltered, nodesAltered, chunkAltered := false, false, false
	for _, a := range altered {
		if a.Name != proto.AttrResourceList {
			continue
		}
		switch {
		case a.Resource == proto.ResSelect:
			selectAltered = true
		case a.Resource == proto.ResNodes:
			nodesAltered = true
		case resc.Lookup(a.Resource).Chunk:
			chunkAltered = true
		}
	}
	if (chunkAltered || nodesAltered) && !selectAltered {
		rl = rl.Delete(proto.ResSelect).Delete(proto.ResNodect)
		if nodesAltered {
			chunkAltered = false
		}
		if chunkAltered {
			return rl
		}
	}
	out := rl.Clone()
	for _, p := range rl {
		if resc.Lookup(p.Name).Chunk {
			out = out.Delete(p.Name)
		}
	}
	return out
}

// selectJobs answers qselect: ids of visible jobs matching every criterion.
func (s *Server) selectJobs(who *caller, req *proto.SelectRequest) (*proto.SelectReply, error) {
	mgr, op := s.privileges(who)
	s.mu.RLock()
	defer s.mu.RUnlock()
	reply := &proto.SelectReply{}
	for _, j := range s.jobList {
		if (!req.History && j.Finished()) || !s.visibleTo(who, j, mgr || op) {
			continue
		}
		ok := true
		for _, c := range req.Criteria {
			match, err := matchCriterion(j, c)
			if err != nil {
				return nil, err
			}
			if !match {
				ok = false
				break
			}
		}
		if ok {
			reply.IDs = append(reply.IDs, j.ID)
		}
	}
	return reply, nil
}

// matchCriterion evaluates one qselect criterion against j.
func matchCriterion(j *model.Job, c proto.Attr) (bool, error) {
	switch c.Name {
	case proto.AttrJobState:
		in := strings.ContainsRune(c.Value, rune(j.StateLetter()))
		if c.Op == proto.OpNE {
			return !in, nil
		}
		return in, nil
	case proto.AttrJobOwner, proto.AttrEuser, proto.AttrUserList:
		for _, u := range model.SplitList(c.Value) {
			name, host, hasHost := strings.Cut(u, "@")
			if name == j.User() && (!hasHost || strings.HasSuffix(j.Owner, "@"+host)) {
				return c.Op != proto.OpNE, nil
			}
		}
		return c.Op == proto.OpNE, nil
	case proto.AttrQueue:
		q, _, _ := strings.Cut(c.Value, "@")
		if q == "" {
			return true, nil
		}
		return (j.Queue == q) == (c.Op != proto.OpNE), nil
	case "array":
		// Job arrays are not supported, so no job is one.
		isArray := strings.EqualFold(c.Value, "True")
		return !isArray == (c.Op != proto.OpNE), nil
	case proto.AttrHoldTypes:
		h, _ := model.NormalizeHolds(c.Value)
		eq := j.Holds == h
		return eq == (c.Op != proto.OpNE), nil
	}
	if !model.IsJobAttr(c.Name) {
		return false, proto.Errorf(proto.PBSE_NOATTR, "%s", c.FullName())
	}
	v, ok := model.JobAttrValue(j, c.Name, c.Resource)
	if !ok {
		return c.Op == proto.OpNE, nil
	}
	var cmp int
	ordered := false
	if c.Resource != "" {
		cmp, ordered = resc.Compare(c.Resource, v, c.Value)
	} else {
		x, errx := strconv.ParseFloat(v, 64)
		y, erry := strconv.ParseFloat(c.Value, 64)
		if errx == nil && erry == nil {
			ordered = true
			switch {
			case x < y:
				cmp = -1
			case x > y:
				cmp = 1
			}
		} else if !strings.EqualFold(v, c.Value) {
			cmp = 1
		}
	}
	switch c.Op {
	case proto.OpEQ, proto.OpSet:
		return cmp == 0, nil
	case proto.OpNE:
		return cmp != 0, nil
	}
	if !ordered {
		return false, proto.Errorf(proto.PBSE_BADATVAL, "%s cannot be compared with an ordering operator", c.FullName())
	}
	switch c.Op {
	case proto.OpGE:
		return cmp >= 0, nil
	case proto.OpGT:
		return cmp > 0, nil
	case proto.OpLE:
		return cmp <= 0, nil
	case proto.OpLT:
		return cmp < 0, nil
	}
	return false, proto.Errorf(proto.PBSE_IVALREQ, "operator %d", c.Op)
}

// account writes an accounting record, logging (not failing) on error: the
// state change it describes is already durable.
func (s *Server) account(kind byte, j *model.Job, kvs []accounting.KV) {
	if err := s.acct.Write(s.now(), kind, j.ID, kvs); err != nil {
		s.log.Error("accounting write failed", "job", j.ID, "error", err)
	}
}

// queuedRecord is the body of a Q record, as in OpenPBS logs.
func (s *Server) queuedRecord(j *model.Job) []accounting.KV {
	kvs := []accounting.KV{
		{Key: "user", Value: j.EUser}, {Key: "group", Value: j.EGroup}, {Key: "project", Value: j.Project},
		{Key: "jobname", Value: j.Name}, {Key: "queue", Value: j.Queue},
		{Key: "ctime", Value: strconv.FormatInt(j.Ctime, 10)}, {Key: "qtime", Value: strconv.FormatInt(j.Qtime, 10)},
		{Key: "etime", Value: strconv.FormatInt(j.Etime, 10)},
	}
	for _, p := range j.ResourceList {
		kvs = append(kvs, accounting.KV{Key: "Resource_List." + p.Name, Value: p.Value})
	}
	return kvs
}
