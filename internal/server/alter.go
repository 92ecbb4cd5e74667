package server

import (
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/admit"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Alteration (qalter): a changed copy of the job checked as admission
// would check it, judged by the submission filters, then swapped in.

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
// The modifyjob hooks judge each alteration first, then the submission
// filters one of a job that has not started (filterAlteration), with no
// lock held.
func (s *Server) alterJobs(who *caller, reqs []proto.AlterRequest) (*proto.AlterJobsReply, error) {
	mgr, op := s.privileges(who)
	reply := &proto.AlterJobsReply{Results: make([]proto.ObjectError, len(reqs))}
	judged := make([]alterVerdict, len(reqs))
	for i := range reqs {
		for _, a := range reqs[i].Attrs {
			if a.Name == proto.AttrStagein || a.Name == proto.AttrStageout {
				s.resolveStageHosts(a.Value) // before the lock: lookups may wait
			}
		}
		asked, hooked, err := s.modifyjobHooks(who, reqs[i].JobID, reqs[i].Attrs)
		if err != nil {
			judged[i].err = err
			continue
		}
		reqs[i].Attrs = asked
		judged[i] = s.filterAlteration(who, &reqs[i], hooked, mgr, op)
		if judged[i].run != nil {
			defer judged[i].run.rm()
		}
	}
	err := s.commit.Do(func(b *store.Batch) error {
		now := s.nowUnix()
		for i := range reqs {
			reply.Results[i].Name = reqs[i].JobID
			err := judged[i].err
			if err == nil {
				_, err = s.alterOne(b, who, &reqs[i], judged[i].extra(), mgr, op, now)
			}
			if err != nil {
				pe := toPBSE(err)
				reply.Results[i].Code, reply.Results[i].Text = pe.Code, pe.Error()
			}
		}
		return nil
	})
	for i, v := range judged {
		if v.run == nil {
			continue
		}
		if err != nil || reply.Results[i].Code != proto.PBSE_NONE {
			why := "the alteration was refused: " + reply.Results[i].Text
			if err != nil {
				why = "the alteration was not saved: " + err.Error()
			}
			s.revertFilters(v.chain, v.run.file, len(v.chain.Programs), reqs[i].JobID, why)
		}
	}
	if err != nil {
		return nil, err
	}
	return reply, nil
}

// alterOne is one qalter request (mu held, inside a commit): of a job;
// of an array, its parent (the template of its waiting subjobs) and its
// subjobs queued on their own; of subjobs, each made a job of its own.
//
// extra are the changes the submission filters' rewrites added, applied
// after the request's with the filters' privilege.
func (s *Server) alterOne(b *store.Batch, who *caller, req *proto.AlterRequest, extra []proto.Attr, mgr, op bool, now int64) (altered, error) {
	top, ref, priv, err := s.resolve(who, req.JobID, mgr, op)
	if err != nil {
		return altered{}, err
	}
	apply := func(j *model.Job, attrs, extra []proto.Attr) (altered, error) {
		res, err := s.alterTarget(b, j, priv, attrs, now)
		if err == nil && len(extra) > 0 {
			res, err = s.alterTarget(b, j, filterPriv, extra, now)
		}
		return res, err
	}
	if !top.IsArray() {
		return apply(top, req.Attrs, extra)
	}
	if ref.NamesSubjobs() {
		if setsAttr(req.Attrs, proto.AttrDepend) {
			return altered{}, proto.Errorf(proto.PBSE_NOSUP, "(dependencies are set on the array, %s)", top.ID)
		}
		var last altered
		for _, i := range ref.IndicesOf(top) {
			j, err := s.ownSubjob(b, top, i, now)
			if err != nil {
				return altered{}, err
			}
			if last, err = apply(j, req.Attrs, extra); err != nil {
				return altered{}, err
			}
		}
		return last, nil
	}
	res, err := apply(top, req.Attrs, extra)
	if err != nil {
		return altered{}, err
	}
	attrs, extra := subjobsShare(req.Attrs), subjobsShare(extra)
	if len(attrs)+len(extra) > 0 {
		for _, j := range s.jobs.LiveSubjobs(top) {
			if !j.Active() {
				if _, err := apply(j, attrs, extra); err != nil {
					return altered{}, err
				}
			}
		}
	}
	return res, nil
}

// subjobsShare are the alterations of an array that its subjobs queued on
// their own take too: all but the array's own attributes.
func subjobsShare(attrs []proto.Attr) []proto.Attr {
	out := make([]proto.Attr, 0, len(attrs))
	for _, a := range attrs {
		switch a.Name {
		case proto.AttrDepend, proto.AttrMaxRunSubjobs, proto.AttrComment, proto.AttrEstimated:
			// The array's own.
		default:
			out = append(out, a)
		}
	}
	return out
}

// alterTarget changes one job, array parent or subjob and saves it (mu
// held, inside a commit).
func (s *Server) alterTarget(b *store.Batch, j *model.Job, priv model.Privilege, attrs []proto.Attr, now int64) (altered, error) {
	c, never, err := s.alteredCopy(j, priv, attrs)
	if err != nil {
		return altered{}, err
	}
	h := c.Settle(now)
	if c.HoldUntil != j.HoldUntil && c.HoldUntil > now && !setsAttr(attrs, proto.AttrComment) {
		// Say why the job waits, where users look.
		c.Comment = heldUntilComment(c.HoldUntil)
	}
	before := j.Accrual
	s.replaceJob(j, c, now)
	if setsAttr(attrs, proto.AttrEligibleTime) {
		s.accrualAltered(before, j, now)
	}
	if never != "" {
		// As when a parent ends: the job can never run.
		s.deleteUnmet(b, j, never, now)
		return altered{job: j}, nil
	}
	s.save(b, j)
	s.hooks(b, j, h, now)
	return altered{job: j}, nil
}

// alteredCopy is j as attrs would leave it, checked as qalter checks it,
// with j and the server unchanged (mu held, for reading at least): the
// submission filters judge it before the commit that makes it so. never
// names a dependency that can never be met.
func (s *Server) alteredCopy(j *model.Job, priv model.Privilege, attrs []proto.Attr) (c *model.Job, never string, err error) {
	c = j.Clone()
	resourcesChanged := false
	for _, a := range attrs {
		if a.Name == proto.AttrResourceList {
			resourcesChanged = true
		}
		if (a.Name == proto.AttrEligibleTime || a.Name == proto.AttrAccrueType) && !s.eligibleTimeOn() {
			return nil, "", proto.Errorf(proto.PBSE_ETEERROR, "%s", a.Name)
		}
		if err := model.SetJobAttr(s.rt(), c, a, priv, model.AtAlter); err != nil {
			return nil, "", err
		}
	}
	if resourcesChanged {
		if err := admit.CheckShrinkToFit(s.rt(), c.ResourceList, c.IsArray(), j.Active()); err != nil {
			return nil, "", err
		}
	}
	if c.IsArray() != j.IsArray() {
		return nil, "", proto.Errorf(proto.PBSE_BADATVAL, "(max_run_subjobs is for job arrays)")
	}
	if c.UserList != j.UserList || c.GroupList != j.GroupList {
		if err := runAs(c, s.users.identifyName(c.EUser, c.UID, c.GID)); err != nil {
			return nil, "", err
		}
	}
	if c.Stagein != j.Stagein || c.Stageout != j.Stageout {
		if err := s.checkStageHosts(c); err != nil {
			return nil, "", err
		}
		if c.Stagein != j.Stagein {
			c.ClearStage() // files staged early are not these
		}
	}
	if resourcesChanged && c.QueueType == "Execution" {
		c.ResourceList = rederivable(s.rt(), c.ResourceList, attrs)
		q, _ := s.queues.Get(c.Queue)
		if err := s.admitView().ApplyResources(c, q); err != nil {
			return nil, "", err
		}
	}
	dependsChanged := setsAttr(attrs, proto.AttrDepend)
	if dependsChanged {
		if c.Depends.HasBefore() || j.Depends.HasBefore() {
			return nil, "", proto.Errorf(proto.PBSE_NOSUP, "(qalter of before dependencies: give them at submission)")
		}
		if c.IsSubjob {
			return nil, "", proto.Errorf(proto.PBSE_NOSUP, "(dependencies are set on the array)")
		}
		if never, err = s.checkDepends(c, priv); err != nil {
			return nil, "", err
		}
	}
	if err := checkResizeSignal(c); err != nil {
		return nil, "", err
	}
	return c, never, nil
}

// heldUntilComment is the comment of a job held by its hold_until.
func heldUntilComment(until int64) string {
	return "Not Running: held until " + time.Unix(until, 0).Format("Mon Jan 02 at 15:04:05") + " (hold_until)"
}

func setsAttr(attrs []proto.Attr, name string) bool {
	for _, a := range attrs {
		if a.Name == name {
			return true
		}
	}
	return false
}

// rederivable prepares an altered resource list for applyResources. The
// host-level totals next to a select were derived from it, so they are
// dropped and derived again; when qalter changed a host-level amount
// (-l ncpus=4) rather than the select, the select is rebuilt from the
// job-wide amounts instead.
func rederivable(rt *resc.Table, rl model.Resources, altered []proto.Attr) model.Resources {
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
		case rt.Lookup(a.Resource).Chunk:
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
		if rt.Lookup(p.Name).Chunk {
			out = out.Delete(p.Name)
		}
	}
	return out
}

// altered is what an alteration left: the job changed.
type altered struct {
	job *model.Job
}
