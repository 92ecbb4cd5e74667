package model

// JobState is a job's state letter as OpenPBS stores it.
type JobState byte

// Job states (reference §4.1). Suspension is a flag on a running job,
// displayed as S.
const (
	StateTransit  JobState = 'T'
	StateQueued   JobState = 'Q'
	StateHeld     JobState = 'H'
	StateWaiting  JobState = 'W'
	StateRunning  JobState = 'R'
	StateExiting  JobState = 'E'
	StateFinished JobState = 'F'
	// StateBegun is an array's parent once a subjob has started, until
	// every subjob has finished (then F).
	StateBegun JobState = 'B'
	// StateExpired is a finished subjob as qstat shows it.
	StateExpired JobState = 'X'
)

// Valid reports whether s is a known state.
func (s JobState) Valid() bool {
	switch s {
	case StateTransit, StateQueued, StateHeld, StateWaiting, StateRunning, StateExiting, StateFinished, StateBegun:
		return true
	}
	return false
}

// Substates, OpenPBS numbering.
const (
	SubTransit    = 0
	SubQueued     = 10
	SubPrestagein = 11 // queued, with files to stage in
	SubStageIn    = 14 // queued; an early stage-in is copying its files
	SubStageGo    = 15 // running; its mom copies the stage-in files before the script
	SubStageCmp   = 16 // queued; its files are in place on its stagein_node
	SubHeld       = 20
	SubDepHold    = 22 // held only by its dependencies (depend)
	SubWaiting    = 30
	SubStageFail  = 37 // waiting (W) after a failed stage-in
	SubPrerun     = 41
	SubRunning    = 42
	SubSuspended  = 43
	SubSchedSusp  = 45 // suspended by the scheduler to preempt it: holds nothing until the scheduler resumes it
	SubExiting    = 50
	SubStageOut   = 51  // its mom copies the stage-out files after the script
	SubRerun      = 60  // qrerun: its mom is killing it, then it is requeued
	SubTerminated = 91  // deleted before or while running
	SubFinished   = 92  // ran to completion
	SubFailed     = 93  // could not run
	SubArrayBegun = 153 // an array's parent once a subjob started (B)
)

// Hold types.
const (
	HoldUser     = 'u'
	HoldOperator = 'o'
	HoldSystem   = 's'
)

// NormalizeHolds returns the hold letters of h in the canonical order
// "uos", "" for none. It accepts "n" for none and rejects other letters.
func NormalizeHolds(h string) (string, bool) {
	var u, o, s bool
	for i := 0; i < len(h); i++ {
		switch h[i] {
		case HoldUser:
			u = true
		case HoldOperator:
			o = true
		case HoldSystem:
			s = true
		case 'n':
		default:
			return "", false
		}
	}
	out := make([]byte, 0, 3)
	if u {
		out = append(out, HoldUser)
	}
	if o {
		out = append(out, HoldOperator)
	}
	if s {
		out = append(out, HoldSystem)
	}
	return string(out), true
}

// HoldAllowed reports whether a caller may set or clear every hold in
// holds: u for the owner, operators and managers; o for operators and
// managers; s for managers only (reference §4.2).
func HoldAllowed(holds string, owner, operator, manager bool) bool {
	for i := 0; i < len(holds); i++ {
		switch holds[i] {
		case HoldUser:
			if !owner && !operator && !manager {
				return false
			}
		case HoldOperator:
			if !operator && !manager {
				return false
			}
		case HoldSystem:
			if !manager {
				return false
			}
		}
	}
	return true
}

// AddHolds returns the union of two canonical hold sets.
func AddHolds(a, b string) string {
	h, _ := NormalizeHolds(a + b)
	return h
}

// RemoveHolds returns a without the holds in b.
func RemoveHolds(a, b string) string {
	out := make([]byte, 0, len(a))
	for i := 0; i < len(a); i++ {
		keep := true
		for j := 0; j < len(b); j++ {
			if a[i] == b[j] {
				keep = false
			}
		}
		if keep {
			out = append(out, a[i])
		}
	}
	return string(out)
}
