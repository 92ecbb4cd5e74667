package server

import (
	"strconv"
	"strings"
	"time"

	"gopbs/internal/accounting"
	"gopbs/internal/mailer"
	"gopbs/internal/model"
	"gopbs/internal/store"
	"gopbs/proto"
	"gopbs/resc"
)

// ExitDeleted is the Exit_status given to a job deleted before it ran.
const ExitDeleted = model.ExitDeleted

// defaultRetention keeps finished jobs visible when neither
// job_history_enable nor keep_completed says otherwise, long enough for
// workflow tools that poll for the exit status.
const defaultRetention = 10 * time.Minute

// visibleTo says whether who may see j.
func (s *Server) visibleTo(who *caller, j *model.Job, privileged bool) bool {
	if privileged || j.User() == who.user || s.server.Bool(proto.AttrQueryOtherJobs) {
		return true
	}
	return false
}

// statusJobs answers qstat. An array is listed as its parent; with
// req.Subjobs (qstat -t) every subjob follows it, and with
// req.LiveSubjobs (schedulers) those that are jobs of their own (queued
// alone, running, exiting): a scheduler makes the others from the
// parent's array_indices_remaining.
func (s *Server) statusJobs(who *caller, req *proto.StatusRequest, to answerTo) (*statusAnswer, error) {
	mgr, op := s.privileges(who)
	priv := mgr || op
	want := model.WantSet(req.Attrs)
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.nowUnix()
	// The lock is let go while an add waits for a slow peer (see
	// newStatusAnswer): the version sent is the one the listing began
	// at, so what changes meanwhile is sent again next time.
	answer := newStatusAnswer(to, s.mu.RLocker())
	reply := &answer.tail
	reply.Version, reply.Epoch = s.counts.version, s.epoch
	render := model.NewJobRenderer(want)
	incremental := req.Since > 0 && req.Epoch == s.epoch && len(req.IDs) == 0
	var attrs []proto.Attr
	gone := false // the peer is gone: stop (handle says why)
	add := func(j *model.Job) {
		if incremental {
			reply.Live = append(reply.Live, j.ID)
			if j.Version <= req.Since {
				return
			}
		}
		attrs = render.AppendTo(attrs[:0], j)
		gone = gone || !answer.frames.Add(j.ID, attrs)
	}
	// subjobs lists array p's subjobs of indices (all when nil) as they
	// stand (qstat -t). An array's index set is never changed in place,
	// so going on through it after a pause is safe.
	subjobs := func(p *model.Job, indices []int) {
		show := func(i int) bool {
			if j, _, ok := s.subjobAt(p, i, now); ok {
				add(j)
			}
			return !gone
		}
		if indices == nil {
			p.Array.Indices.Each(show)
			return
		}
		for _, i := range indices {
			if !show(i) {
				return
			}
		}
	}
	all := func(queue string) {
		for i := 0; i < len(s.jobList) && !gone; i++ {
			j := s.jobList[i]
			if (queue != "" && j.Queue != queue) || (!req.History && j.Finished()) || !s.visibleTo(who, j, priv) {
				continue
			}
			pauses := answer.frames.Pauses()
			if j.IsSubjob {
				if req.LiveSubjobs && !req.Subjobs {
					add(j)
				}
			} else {
				add(j)
				if j.IsArray() && req.Subjobs {
					subjobs(j, nil)
				}
			}
			if answer.frames.Pauses() != pauses {
				// Jobs came and went meanwhile: go on after j's key,
				// neither repeating nor skipping one that stayed.
				i = s.jobsAfter(j.Key()) - 1
			}
		}
	}
	if len(req.IDs) == 0 {
		all("")
		return answer, nil
	}
	for _, raw := range req.IDs {
		if gone {
			break
		}
		id := strings.TrimSpace(raw)
		if ref, isJob := model.ParseJobRef(id); isJob {
			j, ok := s.top(ref.Seq)
			switch {
			case !ok || ref.Kind != model.IDJob && !j.IsArray():
				reply.Errors = append(reply.Errors, objErr(raw, proto.NewError(proto.PBSE_UNKJOBID)))
			case !s.visibleTo(who, j, priv):
				// Before the history check: "Job has finished" would
				// tell who may not see the job that it ended.
				reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_PERM, Text: proto.PBSE_PERM.Message()})
			case j.Finished() && !req.History:
				reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_HISTJOBID, Text: proto.PBSE_HISTJOBID.Message()})
			case namesSubjobs(ref):
				indices := arrayIndices(j, ref)
				if len(indices) == 0 {
					reply.Errors = append(reply.Errors, objErr(raw, proto.NewError(proto.PBSE_UNKJOBID)))
					continue
				}
				subjobs(j, indices)
			default:
				add(j)
				if j.IsArray() && req.Subjobs {
					subjobs(j, nil)
				}
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
	return answer, nil
}

func objErr(name string, err error) proto.ObjectError {
	code := proto.CodeOf(err)
	return proto.ObjectError{Name: name, Code: code, Text: err.Error()}
}

// jobRequest handles delete, hold, release, run, signal and rerun.
func (s *Server) jobRequest(who *caller, t proto.MsgType, req *proto.JobRequest) error {
	switch t {
	case proto.MsgRerunJob:
		return s.rerunJob(who, req.JobID, req.Extra == "force")
	case proto.MsgMoveJob:
		return s.moveJob(who, req.JobID, req.Extra)
	case proto.MsgDeleteJob:
		opts, err := proto.ParseDeleteOptions(req.Extra)
		if err != nil {
			return err
		}
		return s.deleteJob(who, req.JobID, opts)
	case proto.MsgHoldJob:
		return s.holdJob(who, req.JobID, req.Extra, true)
	case proto.MsgReleaseJob:
		return s.holdJob(who, req.JobID, req.Extra, false)
	case proto.MsgRunJob:
		return s.runJob(who, req.JobID, req.Extra)
	case proto.MsgSignalJob:
		return s.signalJob(who, req.JobID, req.Extra)
	case proto.MsgStageInJob:
		return s.stageInJob(who, req.JobID, req.Extra)
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
// Its dependants are released or deleted in the same commit. A subjob
// leaves what is kept of it with its array (endSubjob).
func (s *Server) finish(b *store.Batch, j *model.Job, substate, exit int, comment string, now int64) {
	var h model.Hooks
	s.updateJob(j, func() { h = j.End(substate, exit, comment, now) })
	if j.IsSubjob {
		s.endSubjob(b, j, now)
		return
	}
	if s.retention() <= 0 || j.Purge {
		s.removeJob(j)
		b.DeleteJob(j.Seq)
	} else {
		b.PutJob(j)
	}
	s.hooks(b, j, h, now)
}

// save stores j: a job or array's record, or a subjob's (mu held, inside
// a commit).
func (s *Server) save(b *store.Batch, j *model.Job) {
	if j.IsSubjob {
		b.PutSubjob(j)
	} else {
		b.PutJob(j)
	}
}

// deleteComment is the comment a delete by who leaves on j ("" keeps
// j's own): a scheduler's delete keeps the job's comment, its reason.
func deleteComment(who *caller, j *model.Job) string {
	if who.role == proto.RoleSched && j.Comment != "" {
		return ""
	}
	return deletedBy(who.user + "@" + who.host)
}

// deletedBy is the comment of a job deleted at requestor's request.
func deletedBy(requestor string) string { return "Job deleted by " + requestor }

// endDeleted ends a job whose delete was asked for while it ran (its
// DeleteAskedBy), in place of the transition the caller was about to make
// at the end of its run: a stage-in that failed, a start that failed, a
// requeue would otherwise put back in its queue a job its owner was told
// is deleted, and it would run later. It reports whether it did (mu held,
// inside a commit).
func (s *Server) endDeleted(b *store.Batch, j *model.Job, now int64) bool {
	requestor := j.DeleteAskedBy
	if requestor == "" {
		return false
	}
	s.finish(b, j, model.SubTerminated, ExitDeleted, deletedBy(requestor), now)
	b.After(func() {
		s.log.Info("job deleted", "job", j.ID, "by", requestor, "when", "its run ended")
		s.account(accounting.Deleted, j, []accounting.KV{{Key: "requestor", Value: requestor}})
		s.schedEvent(proto.SchedTerm)
	})
	return true
}

// deleteJob is qdel of a job, an array (every subjob), one subjob or a
// range of them. Queued jobs end at once; running ones are killed by
// their moms and end when their moms report it. With opts.Purge (qdel -x)
// the job leaves no history: a finished one is removed, another is
// removed when it ends.
func (s *Server) deleteJob(who *caller, id string, opts proto.DeleteOptions) error {
	mgr, op := s.privileges(who)
	if opts.Purge {
		if done, err := s.purgeFinished(who, id, mgr, op); done {
			return err
		}
	}
	var deleted []*model.Job
	var running []model.JobKey
	requestor := who.user + "@" + who.host
	err := s.commit.Do(func(b *store.Batch) error {
		deleted, running = nil, nil
		top, ref, _, err := s.resolve(who, id, mgr, op)
		if err != nil {
			return err
		}
		if opts.Purge && namesSubjobs(ref) {
			return proto.Errorf(proto.PBSE_NOSUP, "(qdel -x of subjobs: the history of an array goes with the whole array, %s)", top.ID)
		}
		now := s.nowUnix()
		commentFor := func(j *model.Job) string { return deleteComment(who, j) }
		if who.user != top.User() {
			// Deleted by someone else (a manager, an operator, the
			// scheduler): the owner hears of it, as from OpenPBS.
			why := "Job deleted at request of " + requestor
			if who.role == proto.RoleSched && top.Comment != "" {
				why += "\n" + top.Comment
			}
			s.mailJob(b, top, mailer.Abort, why)
		}
		if opts.Purge && !top.Purge {
			s.updateJob(top, func() { top.Purge = true })
			s.save(b, top)
		}
		del := func(j *model.Job) {
			if j.Active() {
				// Recorded before its mom is asked: whatever the run ends
				// with from now on, the job ends deleted (endDeleted).
				if j.DeleteAskedBy == "" {
					s.updateJob(j, func() { j.DeleteAskedBy = requestor })
					s.save(b, j)
				}
				running = append(running, j.Key())
				return
			}
			s.finish(b, j, model.SubTerminated, ExitDeleted, commentFor(j), now)
			deleted = append(deleted, j)
		}
		if !top.IsArray() {
			del(top)
			return nil
		}
		var indices []int
		if namesSubjobs(ref) {
			indices = arrayIndices(top, ref)
		} else {
			top.Array.Queued.Each(func(i int) bool { indices = append(indices, i); return true })
			for _, j := range s.liveSubjobs(top) {
				if j.Active() {
					indices = append(indices, j.Index)
				}
			}
		}
		var waiting []int
		for _, i := range indices {
			if s.waiting(top, i) {
				waiting = append(waiting, i)
				if namesSubjobs(ref) {
					deleted = append(deleted, top.Subjob(i, s.cfg.ServerName, now))
				}
			} else if j, ok := s.jobs[model.JobKey{Seq: top.Seq, Index: i}]; ok {
				del(j)
			}
		}
		s.deleteWaiting(b, top, waiting, commentFor(top), now)
		if !namesSubjobs(ref) {
			deleted = append(deleted, top)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, j := range deleted {
		s.log.Info("job deleted", "job", j.ID, "by", requestor)
		s.account(accounting.Deleted, j, []accounting.KV{{Key: "requestor", Value: requestor}})
	}
	var firstErr error
	for _, k := range running {
		if err := s.deleteRunning(who, k, opts); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// purgeFinished is qdel -x of a finished job or array: its history is
// removed. done is false when id names no finished job (mu not held).
func (s *Server) purgeFinished(who *caller, id string, mgr, op bool) (done bool, err error) {
	var purged string
	err = s.commit.Do(func(b *store.Batch) error {
		ref, ok := model.ParseJobRef(id)
		if !ok {
			return nil
		}
		top, ok := s.top(ref.Seq)
		if !ok || !top.Finished() || ref.Kind != model.IDJob && !top.IsArray() {
			return nil
		}
		done = true
		if namesSubjobs(ref) {
			return proto.Errorf(proto.PBSE_NOSUP, "(qdel -x of subjobs: the history of an array goes with the whole array, %s)", top.ID)
		}
		if top.User() != who.user && !mgr && !op {
			return proto.NewError(proto.PBSE_PERM)
		}
		s.removeJob(top)
		b.DeleteJob(top.Seq)
		purged = top.ID
		return nil
	})
	if purged != "" {
		s.log.Info("job history purged", "job", purged, "by", who.user+"@"+who.host)
	}
	return done, err
}

// holdJob is qhold (hold) and qrls of a job, an array (its parent and its
// subjobs queued on their own), one subjob or a range (each made a job of
// its own).
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
		top, ref, priv, err := s.resolve(who, id, mgr, op)
		if err != nil {
			return err
		}
		if !model.HoldAllowed(holds, priv.Owner, priv.Operator, priv.Manager) {
			return proto.NewError(proto.PBSE_PERM)
		}
		now := s.nowUnix()
		if !top.IsArray() {
			return s.holdOne(b, top, holds, hold, now)
		}
		if namesSubjobs(ref) {
			indices := arrayIndices(top, ref)
			changed := 0
			for _, i := range indices {
				if j, ok := s.jobs[model.JobKey{Seq: top.Seq, Index: i}]; ok && j.Active() || !top.Array.Queued.Contains(i) {
					continue // running or finished: nothing to hold
				}
				j, err := s.ownSubjob(b, top, i, now)
				if err != nil {
					return err
				}
				if err := s.holdOne(b, j, holds, hold, now); err != nil {
					return err
				}
				changed++
			}
			if changed == 0 {
				return proto.Errorf(proto.PBSE_BADSTATE, "(no subjob of %s named is queued)", top.ID)
			}
			return nil
		}
		if err := s.holdOne(b, top, holds, hold, now); err != nil {
			return err
		}
		for _, j := range s.liveSubjobs(top) {
			if !j.Active() {
				if err := s.holdOne(b, j, holds, hold, now); err != nil {
					return err
				}
			}
		}
		if !hold && top.State == model.StateBegun {
			// Its waiting subjobs may run again; a begun parent's own
			// state does not say so.
			b.After(func() { s.schedEvent(proto.SchedNew) })
		}
		return nil
	})
}

// holdOne sets or clears holds on one job, array parent or subjob (mu
// held, inside a commit).
func (s *Server) holdOne(b *store.Batch, j *model.Job, holds string, hold bool, now int64) error {
	if j.Active() {
		return proto.NewError(proto.PBSE_BADSTATE)
	}
	var h model.Hooks
	s.unindexDepends(j)
	s.updateJob(j, func() {
		if hold {
			j.Holds = model.AddHolds(j.Holds, holds)
		} else {
			j.Holds = model.RemoveHolds(j.Holds, holds)
			if j.StagePhase == model.StageFailed && j.State == model.StateWaiting {
				// qrls ends the wait after a failed stage-in (the
				// owner fixed the file): the job may be tried now.
				j.ExecutionTime = 0
			}
			if strings.IndexByte(holds, model.HoldSystem) >= 0 {
				// A manager's qrls -h s also lifts the wait for
				// dependencies, which OpenPBS shows as an s hold.
				j.ReleaseDepends()
			}
		}
		h = j.Settle(now)
	})
	s.indexDepends(j)
	s.save(b, j)
	s.hooks(b, j, h, now)
	return nil
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
// The submission filters judge each alteration of a job that has not
// started first (filterAlteration), with no lock held.
func (s *Server) alterJobs(who *caller, reqs []proto.AlterRequest) (*proto.AlterJobsReply, error) {
	mgr, op := s.privileges(who)
	reply := &proto.AlterJobsReply{Results: make([]proto.ObjectError, len(reqs))}
	judged := make([]alterVerdict, len(reqs))
	for i := range reqs {
		judged[i] = s.filterAlteration(who, &reqs[i], mgr, op)
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

type altered struct {
	job *model.Job
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
	if namesSubjobs(ref) {
		if setsAttr(req.Attrs, proto.AttrDepend) {
			return altered{}, proto.Errorf(proto.PBSE_NOSUP, "(dependencies are set on the array, %s)", top.ID)
		}
		var last altered
		for _, i := range arrayIndices(top, ref) {
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
		for _, j := range s.liveSubjobs(top) {
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
	s.replaceJob(j, c, now)
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
		if err := model.SetJobAttr(c, a, priv, model.AtAlter); err != nil {
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
		c.ResourceList = rederivable(c.ResourceList, attrs)
		if err := s.applyResources(c, s.queues[c.Queue]); err != nil {
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

// selectJobs answers qselect: ids of visible jobs matching every
// criterion; with req.Subjobs, arrays are replaced by their subjobs.
func (s *Server) selectJobs(who *caller, req *proto.SelectRequest) (*proto.SelectReply, error) {
	mgr, op := s.privileges(who)
	s.mu.RLock()
	defer s.mu.RUnlock()
	// A queue that does not exist is an error, not an empty selection
	// (OpenPBS: "qselect: Unknown queue", exit 170).
	for _, c := range req.Criteria {
		if c.Name != proto.AttrQueue {
			continue
		}
		if q, _, _ := strings.Cut(c.Value, "@"); q != "" {
			if _, ok := s.queues[q]; !ok {
				return nil, proto.Errorf(proto.PBSE_UNKQUE, "%s", q)
			}
		}
	}
	now := s.nowUnix()
	reply := &proto.SelectReply{}
	var failed error
	consider := func(j *model.Job) {
		if failed != nil || (!req.History && (j.Finished() || j.State == model.StateExpired)) {
			return
		}
		for _, c := range req.Criteria {
			match, err := matchCriterion(j, c)
			if err != nil {
				failed = err
				return
			}
			if !match {
				return
			}
		}
		reply.IDs = append(reply.IDs, j.ID)
	}
	for _, j := range s.jobList {
		if j.IsSubjob || (!req.History && j.Finished()) || !s.visibleTo(who, j, mgr || op) {
			continue
		}
		if j.IsArray() && req.Subjobs {
			j.Array.Indices.Each(func(i int) bool {
				if sub, _, ok := s.subjobAt(j, i, now); ok {
					consider(sub)
				}
				return failed == nil
			})
			continue
		}
		consider(j)
	}
	if failed != nil {
		return nil, failed
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
	case proto.AttrArray:
		isArray := strings.EqualFold(c.Value, "True")
		return (j.IsArray() == isArray) == (c.Op != proto.OpNE), nil
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
