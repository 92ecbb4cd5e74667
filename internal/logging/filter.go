package logging

import (
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/logging/logclass"
)

// Filtered is an hclog.Logger that gives every line a PBS event class
// and drops the lines whose class is in its mask: sched_config's
// log_filter for the scheduler. The mask is shared by every logger derived
// from it (Named, With), so changing it applies at once to the whole
// daemon, policy included.
//
// A line's class is the one it names (logclass.Key), else one of its
// With arguments names, else by level and keys: Error lines are error,
// Trace lines debug2, lines with a "job" key job, Debug lines debug,
// anything else sched. The class is written as the line's last pair
// (class=job), so an admin reading sched_logs sees which bit hides it.
//
// StandardLogger and StandardWriter are the underlying logger's and are
// not filtered; nothing in the scheduler uses them.
type Filtered struct {
	hclog.Logger
	mask *atomic.Uint32
	// implied are the With arguments, which the underlying logger prints
	// but Log never sees: kept here to classify lines by them too.
	implied []any
}

// NewFiltered wraps l with an empty mask (nothing dropped).
func NewFiltered(l hclog.Logger) *Filtered {
	return &Filtered{Logger: l, mask: new(atomic.Uint32)}
}

// SetMask sets the classes dropped from now on, for this logger and
// every logger derived from it.
func (f *Filtered) SetMask(mask uint32) { f.mask.Store(mask) }

// Mask returns the classes dropped.
func (f *Filtered) Mask() uint32 { return f.mask.Load() }

// ClassOf returns the class a line at level with args (the logger's
// implied arguments first) gets.
func ClassOf(level hclog.Level, args []any) logclass.Class {
	if c, ok := logclass.Find(args); ok {
		return c
	}
	switch {
	case level == hclog.Error:
		return logclass.Error
	case level == hclog.Trace:
		return logclass.Debug2
	case logclass.Has(args, "job"):
		return logclass.Job
	case level == hclog.Debug:
		return logclass.Debug
	}
	return logclass.Sched
}

// Log writes the line unless its class is in the mask.
func (f *Filtered) Log(level hclog.Level, msg string, args ...any) {
	all := args
	if len(f.implied) > 0 {
		all = append(append([]any(nil), f.implied...), args...)
	}
	c := ClassOf(level, all)
	if c.In(f.mask.Load()) {
		return
	}
	f.Logger.Log(level, msg, append(withoutClass(args), logclass.Key, c.String())...)
}

func (f *Filtered) Trace(msg string, args ...any) { f.Log(hclog.Trace, msg, args...) }
func (f *Filtered) Debug(msg string, args ...any) { f.Log(hclog.Debug, msg, args...) }
func (f *Filtered) Info(msg string, args ...any)  { f.Log(hclog.Info, msg, args...) }
func (f *Filtered) Warn(msg string, args ...any)  { f.Log(hclog.Warn, msg, args...) }
func (f *Filtered) Error(msg string, args ...any) { f.Log(hclog.Error, msg, args...) }

// With returns a filtered logger with args added to every line; a class
// among them becomes the class of its lines (unless a line names another).
func (f *Filtered) With(args ...any) hclog.Logger {
	return &Filtered{Logger: f.Logger.With(withoutClass(args)...), mask: f.mask,
		implied: append(append([]any(nil), f.implied...), args...)}
}

// Named returns a filtered sub-logger sharing the mask.
func (f *Filtered) Named(name string) hclog.Logger {
	return &Filtered{Logger: f.Logger.Named(name), mask: f.mask, implied: f.implied}
}

// ResetNamed returns a filtered logger of another name sharing the mask.
func (f *Filtered) ResetNamed(name string) hclog.Logger {
	return &Filtered{Logger: f.Logger.ResetNamed(name), mask: f.mask, implied: f.implied}
}

// withoutClass drops the class pairs from args: the line ends with the
// class it was given, written once, by name.
func withoutClass(args []any) []any {
	if _, ok := logclass.Find(args); !ok {
		return args
	}
	out := make([]any, 0, len(args))
	for i := 0; i < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == logclass.Key && i+1 < len(args) {
			continue
		}
		out = append(out, args[i:min(i+2, len(args))]...)
	}
	return out
}
