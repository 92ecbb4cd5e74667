package resvs

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// Step is what the clock does to a reservation at one tick.
type Step uint8

// Steps of the clock.
const (
	// StepNone: nothing is due.
	StepNone Step = iota
	// StepNextOccurrence: an occurrence of a standing reservation ended
	// (and any missed while the server was down): its running jobs end,
	// the next occurrence is current, its queue is stopped.
	StepNextOccurrence
	// StepEnd: the reservation ended; it is deleted with its jobs.
	StepEnd
	// StepNotConfirmed: its start came and no scheduler confirmed it;
	// it is denied and deleted with its jobs.
	StepNotConfirmed
	// StepBegin: a confirmed reservation's start came: it runs and its
	// queue is started.
	StepBegin
)

// Due reports whether the clock has a step for r at now, or r is being
// deleted (the tick sweeps it).
func Due(r *model.Resv, now int64) bool {
	switch {
	case r.State == proto.ResvBeingDeleted,
		r.Start() <= now && (r.State == proto.ResvUnconfirmed || r.State == proto.ResvConfirmed),
		r.End() <= now:
		return true
	}
	return false
}

// RetryDue reports whether a degraded reservation's time to be tried
// again has come and was not asked for yet (asked: the retry time last
// asked for, state.Resvs.RetryAsked).
func RetryDue(r *model.Resv, now, asked int64) bool {
	return r.State == proto.ResvDegraded && r.Retry != 0 && r.Retry <= now && asked != r.Retry
}

// Advance takes r one step along the clock at now and says which. It
// changes r for StepNextOccurrence (the next occurrence current, state
// confirmed when it has nodes, else unconfirmed; comment cleared) and for
// StepBegin (running); the caller stores it and does the rest of the
// step (jobs, queue, mail, accounting). A reservation being deleted, or
// a standing one not confirmed at a start with occurrences after it (the
// next may still be confirmed), has no step.
func Advance(r *model.Resv, now int64) Step {
	switch {
	case r.State == proto.ResvBeingDeleted:
		return StepNone
	case r.End() <= now:
		if len(r.Occ) > 1 {
			r.Occ = r.Occ[1:]
			for len(r.Occ) > 1 && r.End() <= now {
				r.Occ = r.Occ[1:] // missed while the server was down
			}
			r.SetState(proto.ResvConfirmed)
			if r.Nodes() == "" {
				r.SetState(proto.ResvUnconfirmed)
			}
			r.Comment, r.Mtime = "", now
			return StepNextOccurrence
		}
		return StepEnd
	case r.Start() <= now && r.State == proto.ResvUnconfirmed:
		if len(r.Occ) > 1 {
			return StepNone
		}
		return StepNotConfirmed
	case r.Start() <= now && r.State == proto.ResvConfirmed:
		r.SetState(proto.ResvRunning)
		r.Mtime = now
		return StepBegin
	}
	return StepNone
}
