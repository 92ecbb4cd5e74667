package server

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// The job's lifecycle once it runs: its start recorded, the phases its
// mom reports, its end (obit), requeue, a start taken back, and how it
// finishes: every end of a job goes through finish. A delete asked for
// wins over every later transition (endDeleted). Array-specific
// bookkeeping of ends is in arrays.go, dependants in depend.go.

// finish moves j to history (mu held, inside a commit): state F with the
// given substate and exit status, or removal when history is not kept.
// Its dependants are released or deleted in the same commit. A subjob
// leaves what is kept of it with its array (endSubjob).
func (s *Server) finish(b *store.Batch, j *model.Job, substate, exit int, comment string, now int64) {
	if !j.IsArray() {
		// An array ends when its subjobs have: they are counted.
		queue, result := j.Queue, endResult(j, substate, exit)
		b.After(func() { s.metrics.Ended(queue, result) })
	}
	if j.Active() && len(j.Alloc) > 0 {
		s.noteNodesUsed(b, j, now)
	}
	var h model.Hooks
	s.jobs.Update(j, func() { h = j.End(substate, exit, comment, now) })
	if j.IsSubjob {
		s.endSubjob(b, j, now)
		return
	}
	if s.retention() <= 0 || j.Purge {
		s.jobs.Remove(j)
		b.DeleteJob(j.Seq)
	} else {
		b.PutJob(j)
	}
	s.hooks(b, j, h, now)
}

// noteNodesUsed sets last_used_time, as OpenPBS's pbsnodes shows it, on
// each node of execHost: a job that ran there ended (mu held, inside a
// commit).
func (s *Server) noteNodesUsed(b *store.Batch, j *model.Job, now int64) {
	seen := map[string]bool{}
	for _, name := range j.ChunkNodes() {
		n, ok := s.nodes.Get(name)
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		c := n.Clone()
		c.Set(proto.AttrNodeLastUsed, "", strconv.FormatInt(now, 10))
		s.nodes.Put(c)
		b.PutNode(c)
	}
}

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

// notePhase shows what a running job's shepherd is doing in its state and
// substate: copying stage-in files (R, STAGEGO), running (R, RUNNING), or
// copying stage-out files (E, STAGEOUT) (mu held). Not worth a commit:
// the next report says it again after a restart.
func (s *Server) notePhase(j *model.Job, phase proto.JobPhase) {
	// Nor is it an event: the stream carries committed changes only.
	s.ev.quiet = true
	s.jobs.Recount(j, func() { j.NotePhase(phase) })
	s.ev.quiet = false
}

// usageResources renders a usage report as resources_used.
func usageResources(j *model.Job, u proto.Usage) model.Resources {
	var r model.Resources
	r = r.Set("cput", resc.FormatDuration(u.CPUSecs))
	r = r.Set("mem", resc.FormatKB(u.MemBytes))
	r = r.Set("vmem", resc.FormatKB(u.VmemBytes))
	r = r.Set("walltime", resc.FormatDuration(u.WallSecs))
	if n, ok := j.ResourceList.Get(proto.ResNcpus); ok {
		r = r.Set("ncpus", n)
	}
	pct := int64(0)
	if u.WallSecs > 0 {
		pct = u.CPUSecs * 100 / u.WallSecs
	}
	r = r.Set("cpupercent", strconv.FormatInt(pct, 10))
	return r
}

// jobObit records a job's end. A repeated or stale notice (the job was
// already finished, requeued or rerun) is acknowledged and ignored, so each
// end counts exactly once.
func (s *Server) jobObit(who *caller, ob *proto.JobObit) error {
	s.mu.RLock()
	j, err := s.jobs.Lookup(ob.JobID)
	rerun := err == nil && j.Active() && j.Substate == model.SubRerun && j.RunCount == ob.RunCount && j.Alloc.Mother() == who.name
	var key model.JobKey
	var why string
	if rerun {
		key, why = j.Key(), j.Comment
	}
	s.mu.RUnlock()
	if rerun {
		// qrerun killed it: back to its queue, whatever it exited with.
		s.requeueJob(key, why, requeueOpts{force: true, used: &ob.Used})
		return nil
	}
	if ob.StageInFailed {
		return s.stageInFailedRun(who, ob)
	}
	if ob.Fenced || ob.ExitStatus == proto.JobExecRetry {
		// Killed because the mom lost the server for longer than its
		// lease, or not started (its mom stopped while starting it, its
		// prologue asked for a retry): not the job's doing, so it goes
		// back to its queue, as it would have had the server seen the
		// node fail. A job that never started goes back even when it is
		// not rerunnable (OpenPBS's JOB_EXEC_RETRY), and is held once it
		// failed to start too often.
		s.mu.RLock()
		j, err := s.jobs.Lookup(ob.JobID)
		live := err == nil && j.Active() && j.RunCount == ob.RunCount && j.Alloc.Mother() == who.name
		s.mu.RUnlock()
		if live {
			if ob.Fenced {
				s.requeue(j.Key(), "Job requeued: killed on "+who.name+" when its mom's lease lapsed (no contact with the server)")
			} else {
				s.requeueJob(j.Key(), "Job requeued: "+ob.Comment+" ("+who.name+")", requeueOpts{force: true, retry: true})
			}
		}
		return nil
	}
	var ended *model.Job
	err = s.commit.Do(func(b *store.Batch) error {
		j, err := s.jobs.Lookup(ob.JobID)
		if err != nil || !j.Active() || j.RunCount != ob.RunCount || j.Alloc.Mother() != who.name {
			return nil
		}
		now := s.nowUnix()
		sub := model.SubFinished
		switch {
		case j.DeleteAskedBy != "":
			// Deleted while it ran: OpenPBS's TERMINATED (91), whatever
			// the exit status the kill gave.
			sub = model.SubTerminated
		case ob.ExitStatus < 0:
			sub = model.SubFailed
		}
		// The comment the job started with stays unless the mom says why
		// the job ended (walltime, a failed start).
		comment := ob.Comment
		j.ResourcesUsed = usageResources(j, ob.Used)
		if ob.SessionID != 0 {
			j.SessionID = ob.SessionID
		}
		// The mail is composed before finish, so that a subjob's goes
		// before the one of the array it may end.
		j.SetExit(ob.ExitStatus)
		ev, text := endMail(ob.ExitStatus, comment)
		s.mailJob(b, j, ev, text)
		s.finish(b, j, sub, ob.ExitStatus, comment, now)
		ended = j
		return nil
	})
	if err != nil {
		return err
	}
	if ended != nil {
		s.log.Info("job ended", "job", ended.ID, "exit_status", ended.ExitStatus, "node", who.name)
		if ob.StageOutSpool != "" {
			s.log.Warn("stage-out failed; files kept in the spool", "job", ended.ID, "node", who.name, "spool", ob.StageOutSpool, "comment", ob.Comment)
		}
		s.account(accounting.Ended, ended, s.endRecord(ended, ob))
		for _, nu := range ob.ByNode {
			s.account(accounting.NodeUsage, ended, nodeUsageRecord(ended, nu))
		}
		s.schedEvent(proto.SchedTerm)
		s.jobobitHooks(ended)
	}
	return fault.Hit(fault.ServerObit)
}

// requeue puts a running job back in its queue (rerunnable) or finishes
// it with the reason (not rerunnable).
func (s *Server) requeue(key model.JobKey, reason string) { s.requeueJob(key, reason, requeueOpts{}) }

// requeueJob is requeue, with opts. A job whose delete was asked for
// ends deleted instead (endDeleted).
func (s *Server) requeueJob(key model.JobKey, reason string, opts requeueOpts) {
	force, used := opts.force, opts.used
	var j2 *model.Job
	requeued, checkpointed := false, false
	err := s.commit.Do(func(b *store.Batch) error {
		j, ok := s.jobs.Get(key)
		if !ok || !j.Active() {
			return nil
		}
		checkpointed = s.checkpointing[key] // a preemption checkpointed it (preempt.go)
		delete(s.checkpointing, key)
		now := s.nowUnix()
		if used != nil {
			j.ResourcesUsed = usageResources(j, *used)
		}
		if s.endDeleted(b, j, now) {
			return nil
		}
		j2 = j
		if !j.Rerunable && !force {
			s.finish(b, j, model.SubFailed, proto.JobExecFail2, strings.Replace(reason, "Job requeued", "Job failed (not rerunnable)", 1), now)
			s.mailJob(b, j, mailer.Abort, j.Comment)
			return nil
		}
		s.transitJob(b, j, now, func() model.Hooks {
			why := reason
			if opts.retry && j.RunCount > maxStartAttempts {
				j.Holds = model.AddHolds(j.Holds, string(model.HoldSystem))
				why = "job held, too many failed attempts to run (" + reason + ")"
			}
			return j.Requeue(why, now)
		})
		requeued = true
		queue := j.Queue
		b.After(func() { s.metrics.Requeued(queue) })
		return nil
	})
	if err != nil {
		s.log.Error("cannot requeue job", "seq", key.Seq, "index", key.Index, "error", err)
		return
	}
	if j2 != nil {
		s.log.Warn("job taken off its node", "job", j2.ID, "reason", reason, "requeued", requeued)
		s.schedEvent(proto.SchedTerm)
		switch {
		case requeued && checkpointed:
			s.account(accounting.Checkpointed, j2, nil)
		case requeued:
			s.account(accounting.Rerun, j2, nil)
		}
	}
}

// nodeUsageRecord is the body of an n record: what a job that ran on
// several nodes used on one of them, with the cpus it held there, for
// its efficiency node by node (qacct -j). OpenPBS writes no such record:
// its readers skip a type they do not know.
func nodeUsageRecord(j *model.Job, nu proto.NodeUsage) []accounting.KV {
	ncpus := int64(0)
	for _, h := range j.Alloc {
		if h.Host == nu.Node {
			ncpus += h.Ncpus
		}
	}
	kvs := []accounting.KV{{Key: "node", Value: nu.Node}, {Key: "ncpus", Value: strconv.FormatInt(ncpus, 10)}}
	for _, p := range usageResources(j, nu.Used) {
		if p.Name == proto.ResNcpus {
			continue // the job's, not the node's
		}
		kvs = append(kvs, accounting.KV{Key: proto.AttrResourcesUsed + "." + p.Name, Value: p.Value})
	}
	return kvs
}

// endRecord is the body of an E accounting record.
func (s *Server) endRecord(j *model.Job, ob *proto.JobObit) []accounting.KV {
	kvs := runRecordHead(j, j.Stime, j.Alloc)
	kvs = append(kvs,
		accounting.KV{Key: "session", Value: strconv.Itoa(j.SessionID)},
		accounting.KV{Key: "end", Value: strconv.FormatInt(ob.End, 10)},
		accounting.KV{Key: "Exit_status", Value: strconv.Itoa(j.ExitStatus)},
	)
	for _, p := range j.ResourcesUsed {
		kvs = append(kvs, accounting.KV{Key: "resources_used." + p.Name, Value: p.Value})
	}
	kvs = append(kvs, accounting.KV{Key: "run_count", Value: strconv.Itoa(j.RunCount)})
	if s.eligibleTimeOn() {
		// OpenPBS's, while it keeps eligible time.
		kvs = append(kvs, accounting.KV{Key: proto.AttrEligibleTime, Value: model.FormatEligible(j.Accrual.EligibleAt(ob.End))})
	}
	if ob.StageOutSpool != "" {
		// Where the owner finds the files whose stage-out failed.
		kvs = append(kvs, accounting.KV{Key: "stageout_spool", Value: ob.StageOutSpool})
	}
	return kvs
}

// recordStart records that j (made a job of its own if it is a subjob
// waiting in array parent) runs on execHost from now (mu held, inside a
// commit).
func (s *Server) recordStart(b *store.Batch, j, parent *model.Job, alloc resc.Alloc, stagedIn bool, comment string, now int64) {
	if _, live := s.jobs.Get(j.Key()); !live {
		s.jobs.Insert(j)
	}
	var h model.Hooks
	s.jobs.Update(j, func() {
		sub := model.SubRunning
		if j.Stagein != "" && !stagedIn {
			sub = model.SubStageGo
		}
		h = j.Start(sub, now)
		j.ClearStage()
		j.Alloc, j.ExecGPUs = alloc, ""
		j.ResourcesUsed = nil
		j.Estimated = nil
		j.HoldUntil = 0 // a wait that is over once the job runs (qrun may start it early)
		if comment != "" {
			j.Comment = comment
		} else {
			j.Comment = fmt.Sprintf("Job run at %s on (%s)", time.Unix(now, 0).Format("Mon Jan 02 at 15:04"), strings.Trim(alloc.ExecVnode(), "()"))
		}
	})
	s.save(b, j)
	s.hooks(b, j, h, now)
	if parent != nil {
		s.began(b, parent, now)
	}
}

// undoRuns returns jobs whose start failed to their queues, in one commit
// (a job deleted meanwhile ends: endDeleted).
func (s *Server) undoRuns(failed []*startRequest) {
	s.commit.Do(func(b *store.Batch) error {
		now := s.nowUnix()
		for _, st := range failed {
			j, ok := s.jobs.Get(st.key)
			if !ok || !j.Active() || j.RunCount != st.spec.RunCount || s.endDeleted(b, j, now) {
				continue
			}
			s.transitJob(b, j, now, func() model.Hooks {
				h := j.Unstart("Not Running: PBS Error: "+st.err.Error(), now)
				// Eligible as it was; the scheduler's cycle is still
				// going: no event.
				h.Eligible = false
				return h
			})
		}
		return nil
	})
}

// stageInFailedRun handles the end of a run whose stage-in failed before
// the script started: the job goes back to its queue, waiting (W) for
// stagefail_wait, its resources free; a job deleted meanwhile ends.
func (s *Server) stageInFailedRun(who *caller, ob *proto.JobObit) error {
	var jobID string
	err := s.commit.Do(func(b *store.Batch) error {
		j, err := s.jobs.Lookup(ob.JobID)
		if err != nil || !j.Active() || j.RunCount != ob.RunCount || j.Alloc.Mother() != who.name {
			return nil // already handled
		}
		now := s.nowUnix()
		if s.endDeleted(b, j, now) {
			return nil
		}
		jobID = j.ID
		var h model.Hooks
		s.jobs.Update(j, func() { h = j.Unstart("", now) })
		// It waits (W) at once: back in its queue, but not eligible.
		h.Eligible = false
		s.hooks(b, j, h, now)
		s.stageFailed(b, j, ob.Comment, now)
		return nil
	})
	if err != nil {
		return err
	}
	if jobID != "" {
		s.log.Warn("stage-in failed; the job waits", "job", jobID, "node", who.name, "error", ob.Comment)
		s.schedEvent(proto.SchedTerm)
	}
	return nil
}

// requeueOpts change how requeueJob treats a job.
type requeueOpts struct {
	force bool         // requeue it even when it is not rerunnable (qrerun -W force, a job that never started)
	used  *proto.Usage // its final usage, when known
	retry bool         // it failed to start: held once it did too often
}

// maxStartAttempts is how many runs of a job may fail to start before it
// is held (OpenPBS holds a job whose run_count goes over 20).
const maxStartAttempts = 20
