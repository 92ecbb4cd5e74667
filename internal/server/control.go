package server

import (
	"fmt"
	"strings"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/signals"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// Control: what users and operators ask of jobs (delete, hold and
// release, signal, suspend and resume, rerun), each checked for the
// caller's rights and committed before the daemons are told.

// jobRequest handles delete, hold, release, run, signal, rerun, stage-in,
// move and order.
func (s *Server) jobRequest(who *caller, t proto.MsgType, req *proto.JobRequest) error {
	switch t {
	case proto.MsgRerunJob:
		return s.rerunJob(who, req.JobID, req.Extra == "force")
	case proto.MsgMoveJob:
		return s.moveJob(who, req.JobID, req.Extra)
	case proto.MsgOrderJob:
		return s.orderJob(who, req.JobID, req.Extra)
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
	if !opts.Force {
		// The site's execjob_preterm hooks may keep a running job from
		// being deleted (hooks.go); qdel -W force does not ask them.
		if err := s.pretermHooks(who, id, mgr, op); err != nil {
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
		if opts.Purge && ref.NamesSubjobs() {
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
			s.editJob(b, top, func() { top.Purge = true })
		}
		del := func(j *model.Job) {
			if j.Active() {
				// Recorded before its mom is asked: whatever the run ends
				// with from now on, the job ends deleted (endDeleted).
				if j.DeleteAskedBy == "" {
					s.editJob(b, j, func() { j.DeleteAskedBy = requestor })
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
		if ref.NamesSubjobs() {
			indices = ref.IndicesOf(top)
		} else {
			top.Array.Queued.Each(func(i int) bool { indices = append(indices, i); return true })
			for _, j := range s.jobs.LiveSubjobs(top) {
				if j.Active() {
					indices = append(indices, j.Index)
				}
			}
		}
		var waiting []int
		for _, i := range indices {
			if s.jobs.Waiting(top, i) {
				waiting = append(waiting, i)
				if ref.NamesSubjobs() {
					deleted = append(deleted, top.Subjob(i, s.cfg.ServerName, now))
				}
			} else if j, ok := s.jobs.Get(model.JobKey{Seq: top.Seq, Index: i}); ok {
				del(j)
			}
		}
		s.deleteWaiting(b, top, waiting, commentFor(top), now)
		if !ref.NamesSubjobs() {
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
		top, ok := s.jobs.Top(ref.Seq)
		if !ok || !top.Finished() || ref.Kind != model.IDJob && !top.IsArray() {
			return nil
		}
		done = true
		if ref.NamesSubjobs() {
			return proto.Errorf(proto.PBSE_NOSUP, "(qdel -x of subjobs: the history of an array goes with the whole array, %s)", top.ID)
		}
		if top.User() != who.user && !mgr && !op {
			return proto.NewError(proto.PBSE_PERM)
		}
		s.jobs.Remove(top)
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
		if ref.NamesSubjobs() {
			indices := ref.IndicesOf(top)
			changed := 0
			for _, i := range indices {
				if j, ok := s.jobs.Get(model.JobKey{Seq: top.Seq, Index: i}); ok && j.Active() || !top.Array.Queued.Contains(i) {
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
		for _, j := range s.jobs.LiveSubjobs(top) {
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
		// As OpenPBS: a running job keeps running; the hold is in its
		// Hold_Types and applies if the job is requeued.
		s.editJob(b, j, func() {
			if hold {
				j.Holds = model.AddHolds(j.Holds, holds)
			} else {
				j.Holds = model.RemoveHolds(j.Holds, holds)
			}
		})
		return nil
	}
	var h model.Hooks
	s.jobs.Update(j, func() {
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
	s.save(b, j)
	s.hooks(b, j, h, now)
	return nil
}

// deleteRunning asks a running job's mom to end it (SIGTERM, SIGKILL after
// kill_delay); the job finishes when the mom reports its end. With force,
// a job whose mom cannot be reached is finished at once.
func (s *Server) deleteRunning(who *caller, key model.JobKey, opts proto.DeleteOptions) error {
	s.starting.wait(key, momTimeout)
	s.mu.RLock()
	j, ok := s.jobs.Get(key)
	if ok && !j.Active() && !j.Finished() {
		// Its start failed while the delete waited, and it is back in its
		// queue: deleted there.
		s.mu.RUnlock()
		return s.deleteRequeued(who, key, opts)
	}
	if !ok || !j.Active() {
		s.mu.RUnlock()
		return nil
	}
	node := j.Alloc.Mother()
	delay := opts.KillDelay
	if delay < 0 {
		delay = s.killDelay(j)
	}
	req := &proto.MomSignal{JobID: j.ID, Signal: signals.Delete, KillDelay: delay}
	run := j.RunCount
	s.mu.RUnlock()
	err := s.callMom(node, proto.MsgMomSignalJob, req)
	if err == nil {
		s.log.Info("delete of running job sent to its mom", "job", req.JobID, "node", node, "by", who.user+"@"+who.host)
		return nil
	}
	if !opts.Force {
		return err
	}
	var done *model.Job
	cerr := s.commit.Do(func(b *store.Batch) error {
		j, ok := s.jobs.Get(key)
		if !ok || !j.Active() || j.RunCount != run {
			return nil
		}
		s.finish(b, j, model.SubTerminated, ExitDeleted, fmt.Sprintf("Job deleted by force by %s@%s; node %s did not answer", who.user, who.host, node), s.nowUnix())
		done = j
		return nil
	})
	if cerr != nil {
		return cerr
	}
	if done != nil {
		s.account(accounting.Deleted, done, []accounting.KV{{Key: "requestor", Value: who.user + "@" + who.host}})
		s.schedEvent(proto.SchedTerm)
	}
	return nil
}

// deleteRequeued ends a job a delete found back in its queue after
// waiting for its start (deleteRunning): as deleteJob ends a queued job,
// without what deleteJob already did for the request (the owner's mail,
// the purge mark). A job started again meanwhile is deleted as running.
func (s *Server) deleteRequeued(who *caller, key model.JobKey, opts proto.DeleteOptions) error {
	requestor := who.user + "@" + who.host
	var done *model.Job
	running := false
	err := s.commit.Do(func(b *store.Batch) error {
		j, ok := s.jobs.Get(key)
		switch {
		case !ok || j.Finished():
			return nil
		case j.Active():
			running = true
			return nil
		}
		s.finish(b, j, model.SubTerminated, ExitDeleted, deleteComment(who, j), s.nowUnix())
		done = j
		return nil
	})
	if err != nil {
		return err
	}
	if running {
		return s.deleteRunning(who, key, opts)
	}
	if done != nil {
		s.log.Info("job deleted", "job", done.ID, "by", requestor)
		s.account(accounting.Deleted, done, []accounting.KV{{Key: "requestor", Value: requestor}})
	}
	return nil
}

// runningTargets are the running jobs an id names (mu held): the job;
// an array's running subjobs; the running ones of the subjobs named.
// None is an error.
func (s *Server) runningTargets(who *caller, id string, mgr, op bool) ([]*model.Job, error) {
	top, ref, _, err := s.resolve(who, id, mgr, op)
	if err != nil {
		return nil, err
	}
	if !top.IsArray() {
		if !top.Active() {
			return nil, proto.Errorf(proto.PBSE_BADSTATE, "(job is %c)", top.StateLetter())
		}
		return []*model.Job{top}, nil
	}
	var out []*model.Job
	if ref.NamesSubjobs() {
		for _, i := range ref.IndicesOf(top) {
			if j, ok := s.jobs.Get(model.JobKey{Seq: top.Seq, Index: i}); ok && j.Active() {
				out = append(out, j)
			}
		}
	} else {
		for _, j := range s.jobs.LiveSubjobs(top) {
			if j.Active() {
				out = append(out, j)
			}
		}
	}
	if len(out) == 0 {
		return nil, proto.Errorf(proto.PBSE_BADSTATE, "(no subjob named is running)")
	}
	return out, nil
}

// signalJob delivers qsig to a running job (or an array's running
// subjobs) through its mom; suspend and resume also change the state
// shown (S).
func (s *Server) signalJob(who *caller, id, sig string) error {
	_, special, ok := signals.Parse(sig)
	if !ok || special == signals.Delete {
		return proto.Errorf(proto.PBSE_UNKSIG, "%s", sig)
	}
	mgr, op := s.privileges(who)
	if (special == signals.Suspend || special == signals.Resume) && !mgr && !op {
		// As OpenPBS: suspending takes a node's cpus back from a job,
		// which is the operators' call, not the owner's.
		return proto.Errorf(proto.PBSE_PERM, "suspend and resume need operator or manager privilege")
	}
	if special == signals.Resume {
		// A job the scheduler suspended to preempt it: only the
		// scheduler resumes it, once its resources are free (preempt.go).
		if handled, err := s.resumePreempted(who, id); handled {
			return err
		}
	}
	type target struct {
		key   model.JobKey
		node  string
		run   int
		jobID string
	}
	var targets []target
	s.mu.RLock()
	jobs, err := s.runningTargets(who, id, mgr, op)
	for _, j := range jobs {
		if special == signals.Resume && !j.Suspended || special == signals.Suspend && j.Suspended {
			if len(jobs) == 1 {
				err = proto.Errorf(proto.PBSE_BADSTATE, "(job is %c)", j.StateLetter())
			}
			continue
		}
		targets = append(targets, target{j.Key(), j.Alloc.Mother(), j.RunCount, j.ID})
	}
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	for _, t := range targets {
		s.starting.wait(t.key, momTimeout)
		if err := s.callMom(t.node, proto.MsgMomSignalJob, &proto.MomSignal{JobID: t.jobID, Signal: sig}); err != nil {
			return err
		}
		s.log.Info("job signalled", "job", t.jobID, "signal", sig, "by", who.user+"@"+who.host)
		if special == "" {
			continue
		}
		err := s.commit.Do(func(b *store.Batch) error {
			j, ok := s.jobs.Get(t.key)
			if !ok || !j.Active() || j.RunCount != t.run {
				return nil
			}
			s.editJob(b, j, func() {
				if special == signals.Suspend {
					j.Suspend()
				} else {
					j.Resume()
				}
			})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// rerunJob is qrerun: a running job's mom kills it, and its obit puts it
// back in its queue (jobObit) instead of ending it; an array's running
// subjobs (or those named) likewise. Operators and managers only, as in
// OpenPBS; a job not rerunnable needs force. The mark (substate SubRerun,
// with the comment) is durable before the kill is asked for, so a server
// restart in between still requeues the job.
func (s *Server) rerunJob(who *caller, id string, force bool) error {
	mgr, op := s.privileges(who)
	if !mgr && !op {
		return proto.NewError(proto.PBSE_PERM)
	}
	type target struct {
		key    model.JobKey
		node   string
		req    *proto.MomSignal
		before string
	}
	var targets []target
	err := s.commit.Do(func(b *store.Batch) error {
		targets = nil
		jobs, err := s.runningTargets(who, id, mgr, op)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if j.State == model.StateExiting {
				if len(jobs) == 1 {
					return proto.Errorf(proto.PBSE_BADSTATE, "(job is %c; only running jobs are rerun)", j.State)
				}
				continue
			}
			if j.Interactive != nil {
				// Not even with force: its terminal cannot be given
				// back, and its qsub waits for this run's end (OpenPBS).
				return proto.Errorf(proto.PBSE_NORERUN, "(%s is interactive)", j.ID)
			}
			if !j.Rerunable && !force {
				return proto.NewError(proto.PBSE_NORERUN)
			}
		}
		for _, j := range jobs {
			if j.State == model.StateExiting {
				continue
			}
			targets = append(targets, target{j.Key(), j.Alloc.Mother(),
				&proto.MomSignal{JobID: j.ID, Signal: signals.Delete, KillDelay: s.killDelay(j)}, j.Comment})
			s.editJob(b, j, func() { j.MarkRerun("Job requeued: rerun by " + who.user + "@" + who.host) })
		}
		return nil
	})
	if err != nil {
		return err
	}
	var firstErr error
	for _, t := range targets {
		s.starting.wait(t.key, momTimeout)
		if err := s.callMom(t.node, proto.MsgMomSignalJob, t.req); err != nil {
			s.unmarkRerun(t.key, t.before)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		s.log.Info("rerun of running job sent to its mom", "job", t.req.JobID, "node", t.node, "by", who.user+"@"+who.host)
	}
	return firstErr
}

// unmarkRerun takes back a rerun mark whose kill the job's mom could not
// be asked for: the job goes on running where it is, with its comment
// before the mark.
func (s *Server) unmarkRerun(key model.JobKey, before string) {
	s.commit.Do(func(b *store.Batch) error {
		if j, ok := s.jobs.Get(key); ok && j.Substate == model.SubRerun {
			s.editJob(b, j, func() { j.UnmarkRerun(before) })
		}
		delete(s.checkpointing, key)
		return nil
	})
}
