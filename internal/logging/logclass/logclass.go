// Package logclass names the PBS event classes of log lines, the bits of
// the scheduler's sched_config log_filter (and of the server's log_events):
// an admin silences a class by adding its bit to the mask. The values are
// PBS's (T:src/include/log.h PBSEVENT_*), so masks written for the classic
// daemons mean the same here: 256 hides the most verbose debugging lines,
// 8 the lines about single jobs.
//
// A log call names its class with the key Key and a Class value:
//
//	log.Info("usage decayed", logclass.Key, logclass.JobUsage)
//
// Lines that do not name one get a class from their level and keys (see
// package logging's Filtered). The package has no dependencies, so the
// pure scheduling policies can use it.
package logclass

import (
	"fmt"
	"strconv"
)

// Class is one PBS event class, a single bit.
type Class uint32

// The PBS event classes, in bit order.
const (
	Error    Class = 0x1   // errors
	System   Class = 0x2   // start, stop, the daemon's own state
	Admin    Class = 0x4   // configuration and administrative actions
	Job      Class = 0x8   // lines about one job
	JobUsage Class = 0x10  // resource usage of jobs and users (fair share)
	Security Class = 0x20  // refused peers, authentication
	Sched    Class = 0x40  // the scheduling cycle's own business
	Debug    Class = 0x80  // debugging detail
	Debug2   Class = 0x100 // the most verbose debugging detail
)

// Key is the log key whose value (a Class) gives a line's class.
const Key = "class"

// All lists the classes in bit order; a fresh slice each call.
func All() []Class {
	return []Class{Error, System, Admin, Job, JobUsage, Security, Sched, Debug, Debug2}
}

// String returns the class's name as log lines show it (error, system,
// admin, job, job_usage, security, sched, debug, debug2), or its hex value
// for a bit PBS does not name.
func (c Class) String() string {
	switch c {
	case Error:
		return "error"
	case System:
		return "system"
	case Admin:
		return "admin"
	case Job:
		return "job"
	case JobUsage:
		return "job_usage"
	case Security:
		return "security"
	case Sched:
		return "sched"
	case Debug:
		return "debug"
	case Debug2:
		return "debug2"
	}
	return "0x" + strconv.FormatUint(uint64(c), 16)
}

// In reports whether c's bit is set in mask: a line of class c is dropped
// when it is.
func (c Class) In(mask uint32) bool { return uint32(c)&mask != 0 }

// Find returns the class named in key/value pairs args (the value after
// Key), and whether there is one. The last one wins, as later keys do in
// a log line.
func Find(args []any) (Class, bool) {
	var c Class
	found := false
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == Key {
			if v, ok := args[i+1].(Class); ok {
				c, found = v, true
			}
		}
	}
	return c, found
}

// Has reports whether key is one of the keys of args.
func Has(args []any, key string) bool {
	for i := 0; i < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == key {
			return true
		}
	}
	return false
}

// Describe lists the classes set in mask, for a log line saying what a
// log_filter hides ("debug2" for 256).
func Describe(mask uint32) string {
	s := ""
	for _, c := range All() {
		if c.In(mask) {
			if s != "" {
				s += ","
			}
			s += c.String()
		}
	}
	if rest := mask &^ 0x1ff; rest != 0 {
		if s != "" {
			s += ","
		}
		s += fmt.Sprintf("0x%x", rest)
	}
	if s == "" {
		return "none"
	}
	return s
}
