package model

import (
	"strconv"

	"github.com/gopbs/gopbs/resc"
)

// OpenPBS's eligible time (server eligible_time_enable): each job
// accrues time of one type at a time, its accrue_type, and the time it
// spends eligible adds up to its eligible_time. Nothing ticks: the job
// keeps the type, the eligible time accrued before the type last
// changed, and when it changed; the rest is worked out from the clock.

// AccrueType is what a job's time counts as (OpenPBS's numbers).
type AccrueType uint8

// Accrue types.
const (
	AccrueInitial    AccrueType = 0
	AccrueIneligible AccrueType = 1
	AccrueEligible   AccrueType = 2
	AccrueRun        AccrueType = 3
	AccrueExit       AccrueType = 4
)

// Name is the type as OpenPBS's server log names it.
func (t AccrueType) Name() string {
	switch t {
	case AccrueIneligible:
		return "ineligible_time"
	case AccrueEligible:
		return "eligible_time"
	case AccrueRun:
		return "run_time"
	case AccrueExit:
		return "exiting"
	}
	return "initial_time"
}

func (t AccrueType) String() string { return strconv.Itoa(int(t)) }

// Accrual is a job's accrued time: Type since Since (Unix seconds), and
// Eligible seconds of eligible time accrued before Since.
type Accrual struct {
	Type     AccrueType
	Eligible int64
	Since    int64
}

// EligibleAt is the eligible time accrued by now.
func (a Accrual) EligibleAt(now int64) int64 {
	if a.Type == AccrueEligible && now > a.Since {
		return a.Eligible + now - a.Since
	}
	return a.Eligible
}

// Change is a switching to type to at now: the time since a.Since is
// added to the eligible time when a was eligible. spent is how long a's
// type lasted.
func (a Accrual) Change(to AccrueType, now int64) (c Accrual, spent int64) {
	spent = max(0, now-a.Since)
	return Accrual{Type: to, Eligible: a.EligibleAt(now), Since: now}, spent
}

// Restart is a keeping the type, with the clock started again at now
// and the eligible time set to eligible (qalter -W eligible_time, and a
// turning on of eligible_time_enable, which counts nothing of the time
// it was off).
func (a Accrual) Restart(eligible, now int64) Accrual {
	return Accrual{Type: a.Type, Eligible: max(0, eligible), Since: now}
}

// FormatEligible is an eligible time as qstat shows it (HH:MM:SS).
func FormatEligible(secs int64) string { return resc.FormatDuration(secs) }

// AccrueFor is the type j's state calls for, as OpenPBS's server
// decides it: running jobs accrue run time, exiting and ended ones exit
// time; a queued job is eligible unless a user hold holds it, it waits
// for a dependency or its execution_time (W), or the scheduler found its
// user, group or project at a run limit (LimitBlocked). OpenPBS counts a
// job held only by a system or operator hold as eligible (the site
// holds it, not its owner), and so a suspended one (qsig -s suspend, or
// the scheduler's preemption), unless its owner holds it.
//
// An array's parent is eligible while subjobs wait to run, else (all
// of them started) ineligible.
func AccrueFor(j *Job) AccrueType {
	switch j.State {
	case StateRunning:
		if !j.Suspended && j.Substate != SubSuspended && j.Substate != SubSchedSusp {
			return AccrueRun
		}
		if j.holdsAccrual() {
			return AccrueIneligible
		}
		return AccrueEligible
	case StateExiting, StateFinished:
		return AccrueExit
	case StateBegun:
		if j.Array != nil && !j.Array.Queued.Empty() && !j.holdsAccrual() {
			return AccrueEligible
		}
		return AccrueIneligible
	case StateQueued, StateHeld:
		if j.holdsAccrual() || j.LimitBlocked {
			return AccrueIneligible
		}
		return AccrueEligible
	}
	return AccrueIneligible // W, T
}

// holdsAccrual reports whether what holds the job keeps it from accruing
// eligible time: a user hold, or dependencies not met.
func (j *Job) holdsAccrual() bool {
	for i := 0; i < len(j.Holds); i++ {
		if j.Holds[i] == HoldUser {
			return true
		}
	}
	return j.Substate == SubDepHold || j.Depends.Waiting()
}
