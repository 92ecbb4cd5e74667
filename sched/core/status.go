package core

import (
	"fmt"
	"time"
)

// Code is the outcome of a check.
type Code uint8

// Check outcomes.
const (
	// Run: nothing stops the job.
	Run Code = iota
	// NotNow: the job cannot start this cycle; it may later.
	NotNow
	// Never: the job can never run as it is (it asks for more than any
	// node has); policies fail it.
	Never
	// WaitUntil: the job cannot start before Status.Until.
	WaitUntil
	// Block: the job does not start, and neither does any job of equal or
	// lower priority after it this cycle (an activation filter's exit 1).
	Block
	// Keep: the job does not start now, and the resources found for it
	// stay reserved for it this cycle (an activation filter's exit 2).
	Keep
)

// Status is what a check, a filter or an activation hook says of a job:
// the outcome, why, and who said it. Its Reason is the job's "Not
// Running: ..." comment, a filter's verdict in the job's comment, and a
// line of the simulator's log.
type Status struct {
	Code   Code
	Reason string
	Until  time.Time // WaitUntil
	Plugin string    // the check's name
	// Entity marks a NotNow for a run limit on the job's user, group or
	// project (max_user_run, max_group_run, max_user_res, max_group_res,
	// max_run and max_run_res of u:, g: and p:): OpenPBS makes such a
	// job ineligible (it accrues no eligible time), unlike one waiting
	// for resources or an overall limit.
	Entity bool
}

// EntityNotNow is a NotNow status for a limit on the job's user, group
// or project (Status.Entity).
func EntityNotNow(plugin, format string, args ...any) Status {
	s := NotNowf(plugin, format, args...)
	s.Entity = true
	return s
}

// OK is the status of a check that found nothing against the job.
var OK = Status{}

// IsRun reports whether the status lets the job run.
func (s Status) IsRun() bool { return s.Code == Run }

// NotNowf is a NotNow status with a formatted reason.
func NotNowf(plugin, format string, args ...any) Status {
	return Status{Code: NotNow, Reason: fmt.Sprintf(format, args...), Plugin: plugin}
}

// Neverf is a Never status with a formatted reason.
func Neverf(plugin, format string, args ...any) Status {
	return Status{Code: Never, Reason: fmt.Sprintf(format, args...), Plugin: plugin}
}

// Waitf is a WaitUntil status.
func Waitf(plugin string, until time.Time, format string, args ...any) Status {
	return Status{Code: WaitUntil, Until: until, Reason: fmt.Sprintf(format, args...), Plugin: plugin}
}

// Comment is the job comment for a status that keeps the job from
// running.
func (s Status) Comment() string { return "Not Running: " + s.Reason }

func (s Status) String() string {
	names := [...]string{"run", "not now", "never", "wait", "block", "keep"}
	out := names[s.Code]
	if s.Plugin != "" {
		out += " (" + s.Plugin + ")"
	}
	if s.Reason != "" {
		out += ": " + s.Reason
	}
	if s.Code == WaitUntil {
		out += " until " + s.Until.UTC().Format(time.RFC3339)
	}
	return out
}

// Logger takes a policy's remarks (hclog.Logger is one; the simulator and
// tests pass their own). Arguments are key/value pairs.
type Logger interface {
	Debug(msg string, args ...any)
	Info(msg string, args ...any)
	Warn(msg string, args ...any)
	Error(msg string, args ...any)
}

// NopLogger discards every remark.
type NopLogger struct{}

func (NopLogger) Debug(string, ...any) {}
func (NopLogger) Info(string, ...any)  {}
func (NopLogger) Warn(string, ...any)  {}
func (NopLogger) Error(string, ...any) {}

// Event says why a cycle runs.
type Event uint8

// Events: the server's (DESIGN §2), and the simulator's own.
const (
	EventNew   Event = iota + 1 // a job became eligible
	EventTerm                   // a running job ended
	EventTime                   // scheduler_iteration passed
	EventRecyc                  // the last cycle started exactly one job
	EventCmd                    // scheduling was set True
	EventFirst                  // first cycle after the server started
	EventSim                    // a simulator's pass
)

func (e Event) String() string {
	names := [...]string{"", "new", "term", "time", "recyc", "cmd", "scheduler_first", "simulation"}
	if int(e) < len(names) && e > 0 {
		return names[e]
	}
	return "unknown"
}
