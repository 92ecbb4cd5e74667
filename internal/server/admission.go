package server

import (
	"strings"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/admit"
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
	// Hooks first, then filters: a filter judges the job as the hooks
	// left it (README, "Site hooks").
	if base, queueReq, err = s.queuejobHooks(who, base, queueReq); err != nil {
		return "", err
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
	if err := admit.CheckShrinkToFit(rt, base.ResourceList, base.IsArray(), false); err != nil {
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
			if !model.MatchesUserList(roots, "root", base.SubmitHost) {
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
		placed, err := s.admitView().Enqueue(j, q, admitCaller(who), false, now)
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
