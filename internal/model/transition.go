package model

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
	j.ExecHost, j.ExecVnode = "", ""
	if comment != "" {
		j.Comment = comment
	}
	j.Etime = 0
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
