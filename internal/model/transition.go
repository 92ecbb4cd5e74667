package model

import "github.com/gopbs/gopbs/proto"

// Job state transitions, in one place: every path that moves a job (submit,
// hold and release, qalter, timers, requeue, run, end) goes through these
// methods, so that the rules that go with a state (etime, substate) are
// written once and the server learns from one value what else must happen
// (Hooks).

// Hooks says what the server must do after a transition, in the same
// commit (dependants) or once it is durable (the scheduler's event).
type Hooks struct {
	// Eligible: the job became queued; the scheduler should hear of it
	// (NEW), when it is in an execution queue.
	Eligible bool
	// Began: the job started; its after dependants are met.
	Began bool
	// Ended: the job finished; its dependants are met, or deleted when
	// they never can be.
	Ended bool
}

// Settle re-evaluates a job that is neither running nor finished (holds,
// dependencies, Execution_Time; see EvalState) and keeps etime, the time
// the job became eligible: set when it becomes queued, cleared while it is
// held or waiting.
func (j *Job) Settle(now int64) Hooks {
	was := j.State
	j.EvalState(now)
	switch j.State {
	case StateQueued:
		if j.Etime == 0 {
			j.Etime = now
		}
	case StateHeld, StateWaiting:
		j.Etime = 0
	}
	return Hooks{Eligible: j.State == StateQueued && was != StateQueued}
}

// Requeue puts a job that was running (or being started) back in its
// queue, eligible again from now.
func (j *Job) Requeue(comment string, now int64) Hooks {
	j.State = StateTransit
	j.Suspended = false
	j.Alloc, j.ExecGPUs = nil, ""
	if comment != "" {
		j.Comment = comment
	}
	j.Etime = 0
	j.forgetChosenWalltime()
	return j.Settle(now)
}

// Start records that the job runs from now, with the given running
// substate.
func (j *Job) Start(substate int, now int64) Hooks {
	j.State, j.Substate = StateRunning, substate
	j.Stime = now
	j.RunCount++
	j.HasExit = false
	return Hooks{Began: true}
}

// End moves the job to history (F) with its substate and exit status; a
// non-empty comment replaces the job's.
func (j *Job) End(substate, exit int, comment string, now int64) Hooks {
	j.State = StateFinished
	j.Substate = substate
	j.Suspended = false
	j.SetExit(exit)
	j.HistoryTime = now
	j.Obittime = now
	if comment != "" {
		j.Comment = comment
	}
	return Hooks{Ended: true}
}

// Submitted makes a new job, its id given, a submission in transit from
// now: not yet in any queue (what the submission filters see).
func (j *Job) Submitted(queue string, now int64) {
	j.State = StateTransit
	j.Queue = queue
	j.Ctime, j.Qtime, j.Mtime = now, now, now
}

// Enqueue puts the job in queue (of type qtype, "Execution" or "Route")
// from now, and settles it there (held, waiting or queued).
func (j *Job) Enqueue(queue, qtype string, now int64) Hooks {
	j.Queue, j.QueueType = queue, qtype
	j.Qtime = now
	j.State = StateTransit
	return j.Settle(now)
}

// Unstart takes back a start that did not happen (the mom refused it, or
// its stage-in failed before the script ran): the job is back in its
// queue with no start time, eligible since it was before (unlike a
// requeue, which makes it eligible from now).
func (j *Job) Unstart(comment string, now int64) Hooks {
	j.State = StateTransit
	j.Suspended = false
	j.Alloc, j.ExecGPUs = nil, ""
	j.Stime = 0
	j.forgetChosenWalltime()
	if comment != "" {
		j.Comment = comment
	}
	return j.Settle(now)
}

// BeginArray marks a job array begun (B) when its first subjob starts.
func (j *Job) BeginArray(now int64) Hooks {
	j.State, j.Substate = StateBegun, SubArrayBegun
	j.Stime = now
	j.Comment = ""
	return Hooks{Began: true}
}

// Suspend and Resume mark a running job suspended (qsig -s suspend) or
// running again.
func (j *Job) Suspend() { j.Suspended, j.Substate = true, SubSuspended }

// Resume: see Suspend.
func (j *Job) Resume() { j.Suspended, j.Substate = false, SubRunning }

// Preempted marks a running job suspended by the scheduler to preempt
// it, saying why: it holds nothing until the scheduler resumes it
// (Resume).
func (j *Job) Preempted(comment string) {
	j.Suspended, j.Substate = true, SubSchedSusp
	j.Comment = comment
}

// MarkRerun marks a running job to be requeued when its mom reports its
// end (qrerun), saying why.
func (j *Job) MarkRerun(comment string) {
	j.Substate = SubRerun
	j.Comment = comment
}

// UnmarkRerun takes a rerun mark back (its mom could not be told), with
// the comment the job had.
func (j *Job) UnmarkRerun(comment string) {
	j.Substate = SubRunning
	j.Comment = comment
}

// NotePhase follows what the job's mom reports it doing: staging in
// (running, substate stage-go), running, or staging out (exiting). A
// suspended job or one marked for rerun keeps its substate, and a job
// never goes back from staging out to running. It reports whether the
// state changed.
func (j *Job) NotePhase(phase proto.JobPhase) bool {
	if j.Suspended || j.Substate == SubRerun {
		return false
	}
	state, sub := StateRunning, SubRunning
	switch phase {
	case proto.PhaseStageIn:
		sub = SubStageGo
	case proto.PhaseStageOut:
		state, sub = StateExiting, SubStageOut
	}
	if j.State == StateExiting && state == StateRunning {
		return false // staging out once: never back to running
	}
	if j.State == state && j.Substate == sub {
		return false
	}
	j.State, j.Substate = state, sub
	return true
}
