package server

import (
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/signals"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// Preemption, as OpenPBS's server does it for its scheduler
// (preempt_jobs): the scheduler names running jobs to preempt for a job
// of a higher rank, each with the methods to try in order, and the server
// tries them and says which worked. Only the scheduler's own connection
// may ask, and only for a job that runs (not exiting, suspended or being
// requeued).
//
//   - Suspend: the job's moms freeze it on every node (qsig -s suspend),
//     then one commit marks it suspended by the scheduler (substate 45)
//     with a comment saying for which job: from then on it holds nothing,
//     and a z accounting record gives its usage and what it released. The
//     scheduler resumes it (SignalJob resume) once its resources are free:
//     the server checks that every chunk of its exec_vnode fits again and
//     holds them in one commit before its moms thaw it (an r record). An
//     operator's resume of such a job is refused: its resources went to
//     another job.
//   - Checkpoint: for a job whose Checkpoint attribute is not n, the job's
//     first mom runs its $action checkpoint_abort and ends the job; the
//     job goes back to its queue and a C record says so. A mom without the
//     action refuses, and the next method is tried.
//   - Requeue: a rerunnable job that is not interactive is killed and
//     requeued, as qrerun does (an R record).
//
// The marks of checkpoint and requeue (substate 60, with the comment) are
// durable before the mom is asked, as qrerun's; a suspend is recorded
// once the mom has frozen the job, since until then it holds what it
// holds.

// maxPreemptJobs bounds one request.
const maxPreemptJobs = 10000

// checkpointWait is how long the server waits for a mom's checkpoint: the
// action's own time limit ($action checkpoint_abort, at most
// maxCheckpointTimeout on the mom) and a margin.
const checkpointWait = 5*time.Minute + 15*time.Second

// preemptJobs is the scheduler's request to preempt jobs.
func (s *Server) preemptJobs(who *caller, req *proto.PreemptJobsRequest) (*proto.PreemptJobsReply, error) {
	if who.role != proto.RoleSched {
		return nil, proto.Errorf(proto.PBSE_PERM, "(only the scheduler preempts jobs)")
	}
	if len(req.Jobs) > maxPreemptJobs {
		return nil, proto.Errorf(proto.PBSE_IVALREQ, "(%d jobs to preempt in one request: at most %d)", len(req.Jobs), maxPreemptJobs)
	}
	reply := &proto.PreemptJobsReply{Results: make([]proto.PreemptResult, len(req.Jobs))}
	for i, spec := range req.Jobs {
		reply.Results[i] = s.preemptJob(spec)
	}
	return reply, nil
}

// preemptJob tries spec's methods in order until one works.
func (s *Server) preemptJob(spec proto.PreemptSpec) proto.PreemptResult {
	res := proto.PreemptResult{JobID: spec.JobID}
	s.mu.RLock()
	why := s.preemptReason(spec.For)
	s.mu.RUnlock()
	var last error = proto.Errorf(proto.PBSE_IVALREQ, "(no preemption method given)")
	for i := 0; i < len(spec.Methods); i++ {
		m := spec.Methods[i]
		if strings.IndexByte(spec.Methods[:i], m) >= 0 {
			continue // each method once
		}
		var err error
		switch m {
		case proto.PreemptSuspend:
			err = s.preemptSuspend(spec.JobID, why)
		case proto.PreemptCheckpoint:
			err = s.preemptCheckpoint(spec.JobID, why)
		case proto.PreemptRequeue:
			err = s.preemptRequeue(spec.JobID, why)
		default:
			err = proto.Errorf(proto.PBSE_IVALREQ, "(%q is not a preemption method: S, C or R)", string(rune(m)))
		}
		if err == nil {
			res.Method = m
			s.log.Info("job preempted", "job", spec.JobID, "method", string(rune(m)), "for", spec.For)
			return res
		}
		s.log.Info("preemption method failed", "job", spec.JobID, "method", string(rune(m)), "error", err)
		last = err
	}
	pe := toPBSE(last)
	res.Code, res.Text = pe.Code, pe.Error()
	return res
}

// preemptReason is what a preempted job's comment says it was preempted
// for: the job and its queue (mu held).
func (s *Server) preemptReason(forID string) string {
	if forID == "" {
		return "by the scheduler"
	}
	if j, err := s.jobs.Lookup(forID); err == nil {
		return "to run job " + j.ID + " (queue " + j.Queue + ")"
	}
	return "to run job " + forID
}

// victim is the job a preemption names, if it runs (mu held).
func (s *Server) victim(id string) (*model.Job, error) {
	j, err := s.jobs.Lookup(id)
	if err != nil {
		return nil, err
	}
	if j.State != model.StateRunning || j.Substate != model.SubRunning || j.Suspended {
		return nil, proto.Errorf(proto.PBSE_BADSTATE, "(only a running job is preempted: %s is %c, substate %d)", j.ID, j.StateLetter(), j.Substate)
	}
	return j, nil
}

// preemptSuspend freezes the job on its nodes, then records that it
// holds nothing.
func (s *Server) preemptSuspend(id, why string) error {
	s.mu.RLock()
	j, err := s.victim(id)
	var key model.JobKey
	var node string
	var run int
	if err == nil {
		key, node, run = j.Key(), j.Alloc.Mother(), j.RunCount
	}
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	if err := s.callMom(node, proto.MsgMomSignalJob, &proto.MomSignal{JobID: id, Signal: signals.Suspend}); err != nil {
		return err
	}
	var done *model.Job
	var record []accounting.KV
	err = s.commit.Do(func(b *store.Batch) error {
		j, ok := s.jobs.Get(key)
		if !ok || j.State != model.StateRunning || j.RunCount != run || j.Suspended {
			return nil
		}
		record = suspendRecord(j)
		s.editJob(b, j, func() { j.Preempted("Job preempted by suspension " + why) })
		done = j
		return nil
	})
	if err != nil {
		return err
	}
	if done == nil {
		return proto.Errorf(proto.PBSE_BADSTATE, "(%s ended while it was suspended)", id)
	}
	s.account(accounting.Suspended, done, record)
	return nil
}

// suspendRecord is the body of a z record: the job's usage so far and
// the resources it releases (OpenPBS's resources_released).
func suspendRecord(j *model.Job) []accounting.KV {
	var kvs []accounting.KV
	for _, p := range j.ResourcesUsed {
		kvs = append(kvs, accounting.KV{Key: "resources_used." + p.Name, Value: p.Value})
	}
	return append(kvs, accounting.KV{Key: "resources_released", Value: j.ExecVnode()})
}

// preemptRequeue kills a rerunnable job and puts it back in its queue, as
// qrerun does: the mark first, durably, then the mom's kill.
func (s *Server) preemptRequeue(id, why string) error {
	return s.preemptByEnding(id, "Job requeued: preempted "+why, false, func(j *model.Job) error {
		if j.Interactive != nil {
			return proto.Errorf(proto.PBSE_NORERUN, "(%s is interactive)", j.ID)
		}
		if !j.Rerunable {
			return proto.Errorf(proto.PBSE_NORERUN, "(%s is not rerunnable)", j.ID)
		}
		return nil
	}, func(node string, req *proto.MomSignal) error {
		req.Signal = signals.Delete
		return s.callMom(node, proto.MsgMomSignalJob, req)
	})
}

// preemptCheckpoint has the job's first mom checkpoint it and end it;
// its end puts it back in its queue.
func (s *Server) preemptCheckpoint(id, why string) error {
	return s.preemptByEnding(id, "Job checkpointed and requeued: preempted "+why, true, func(j *model.Job) error {
		if strings.HasPrefix(j.Checkpoint, "n") {
			return proto.Errorf(proto.PBSE_NOSUP, "(%s may not be checkpointed: Checkpoint=%s)", j.ID, j.Checkpoint)
		}
		if j.Interactive != nil {
			return proto.Errorf(proto.PBSE_NOSUP, "(%s is interactive: it cannot be restarted)", j.ID)
		}
		return nil
	}, func(node string, req *proto.MomSignal) error {
		s.mu.RLock()
		addr, err := s.momAddrLocked(node)
		s.mu.RUnlock()
		if err != nil {
			return err
		}
		// Its own connection: a checkpoint may take longer than the pooled
		// connections wait.
		c, err := s.dialDaemon(addr, checkpointWait)
		if err != nil {
			return proto.Errorf(proto.PBSE_NORELYMOM, "(mom at %s: %v)", addr, err)
		}
		defer c.Close()
		return c.Call(proto.MsgMomCheckpoint, req, nil)
	})
}

// preemptByEnding marks the job to be requeued when it ends (with
// comment; as a checkpoint when ckpt) once allowed says it may be, then
// has its first mom end it (ask); when the mom cannot, the mark is taken
// back.
func (s *Server) preemptByEnding(id, comment string, ckpt bool, allowed func(*model.Job) error, ask func(node string, req *proto.MomSignal) error) error {
	var key model.JobKey
	var node, before string
	var req *proto.MomSignal
	err := s.commit.Do(func(b *store.Batch) error {
		j, err := s.victim(id)
		if err != nil {
			return err
		}
		if err := allowed(j); err != nil {
			return err
		}
		key, node, before = j.Key(), j.Alloc.Mother(), j.Comment
		req = &proto.MomSignal{JobID: j.ID, KillDelay: s.killDelay(j)}
		s.editJob(b, j, func() { j.MarkRerun(comment) })
		if ckpt {
			if s.checkpointing == nil {
				s.checkpointing = map[model.JobKey]bool{}
			}
			s.checkpointing[key] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.starting.wait(key, momTimeout)
	if err := ask(node, req); err != nil {
		s.unmarkRerun(key, before)
		return err
	}
	return nil
}

// resumePreempted is the scheduler's resume of a job it suspended to
// preempt it: the job's chunks are held again in one commit, once they
// are verified free, then its moms thaw it. handled is false when id
// names no such job (an ordinary resume). Only the scheduler resumes such
// a job.
func (s *Server) resumePreempted(who *caller, id string) (handled bool, err error) {
	s.mu.RLock()
	j, lerr := s.jobs.Lookup(id)
	preempted := lerr == nil && j.Active() && j.Substate == model.SubSchedSusp
	s.mu.RUnlock()
	if !preempted {
		return false, nil
	}
	if who.role != proto.RoleSched {
		return true, proto.Errorf(proto.PBSE_BADSTATE, "(%s was suspended by the scheduler to preempt it; its resources went to another job, and the scheduler resumes it when they are free)", id)
	}
	var key model.JobKey
	var node, before string
	var run int
	err = s.commit.Do(func(b *store.Batch) error {
		j, err := s.jobs.Lookup(id)
		if err != nil {
			return err
		}
		if !j.Active() || j.Substate != model.SubSchedSusp {
			return proto.Errorf(proto.PBSE_BADSTATE, "(job is %c, substate %d)", j.StateLetter(), j.Substate)
		}
		if err := s.startView().Resumable(j); err != nil {
			return err
		}
		key, node, before, run = j.Key(), j.Alloc.Mother(), j.Comment, j.RunCount
		s.editJob(b, j, func() {
			j.Resume()
			j.Comment = "Job resumed on " + s.now().Format("Mon Jan 02 at 15:04") + " after preemption"
		})
		return nil
	})
	if err != nil {
		return true, err
	}
	if err := s.callMom(node, proto.MsgMomSignalJob, &proto.MomSignal{JobID: id, Signal: signals.Resume}); err != nil {
		// Still frozen: it holds nothing again.
		s.commit.Do(func(b *store.Batch) error {
			if j, ok := s.jobs.Get(key); ok && j.Active() && j.RunCount == run && j.Substate == model.SubRunning {
				s.editJob(b, j, func() { j.Preempted(before) })
			}
			return nil
		})
		return true, err
	}
	s.mu.RLock()
	j, _ = s.jobs.Get(key)
	s.mu.RUnlock()
	if j != nil {
		s.account(accounting.Resumed, j, nil)
	}
	s.log.Info("job resumed after preemption", "job", id, "by", who.user+"@"+who.host)
	return true, nil
}
