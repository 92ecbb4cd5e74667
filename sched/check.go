package sched

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gopbs/gopbs/internal/daemon"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
)

// Exit statuses of the check mode (pbs_sched -t).
const (
	CheckOK       = 0 // the files load: the scheduler would use them
	CheckRefused  = 1 // the scheduler would refuse them and keep its policy
	CheckBadUsage = 2 // the command line was wrong
)

// Check validates a sched_priv directory exactly as the running scheduler
// loads it (every file parsed, then handed to policy), without touching
// anything: admins run it before saving an edit, or on a copy. It writes
// each problem to out as "file:line: message" and each warning as
// "file:line: warning: message" (what editors and grep understand), then
// a closing line, and returns CheckOK or CheckRefused. now decides the
// holidays' year check.
func Check(dir string, policy Policy, now time.Time, out io.Writer) int {
	files, err := privdir.Load(dir, time.Local)
	if err != nil {
		if errs, ok := schedpriv.AsErrors(err); ok {
			for _, p := range errs {
				fmt.Fprintln(out, p.String())
			}
			fmt.Fprintf(out, "%s: %d %s: the scheduler would keep its previous policy\n", dir, len(errs), plural(len(errs), "error", "errors"))
		} else {
			// Unreadable files, or problems joined with I/O errors:
			// errors.Join already writes one per line.
			fmt.Fprintln(out, err)
			fmt.Fprintf(out, "%s: cannot be used: the scheduler would keep its previous policy\n", dir)
		}
		return CheckRefused
	}
	warnings := append([]schedpriv.Problem(nil), files.Warnings...)
	warnings = append(warnings, files.Check(now)...)
	log := &checkLogger{dir: dir}
	if err := policy.Configure(files, log); err != nil {
		fmt.Fprintf(out, "%s: the policy refuses the files: %v\n", dir, err)
		return CheckRefused
	}
	for _, w := range warnings {
		if w.Line > 0 {
			fmt.Fprintf(out, "%s:%d: warning: %s\n", w.File, w.Line, w.Msg)
		} else {
			fmt.Fprintf(out, "%s: warning: %s\n", w.File, w.Msg)
		}
	}
	for _, w := range log.lines {
		fmt.Fprintln(out, w)
	}
	n := len(warnings) + len(log.lines)
	if n == 0 {
		fmt.Fprintf(out, "%s: OK\n", dir)
	} else {
		fmt.Fprintf(out, "%s: OK, %d %s\n", dir, n, plural(n, "warning", "warnings"))
	}
	return CheckOK
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkLogger keeps what a policy's Configure says at warning level or
// above, for the check's output; its debug and info remarks are not
// findings.
type checkLogger struct {
	dir   string
	lines []string
}

func (*checkLogger) Debug(string, ...any) {}
func (*checkLogger) Info(string, ...any)  {}
func (l *checkLogger) Warn(msg string, args ...any) {
	l.lines = append(l.lines, fmt.Sprintf("%s: warning: %s%s", l.dir, msg, pairs(args)))
}
func (l *checkLogger) Error(msg string, args ...any) {
	l.lines = append(l.lines, fmt.Sprintf("%s: error: %s%s", l.dir, msg, pairs(args)))
}

// pairs writes key/value arguments as hclog does after a message:
// ": key=value ...".
func pairs(args []any) string {
	if len(args) < 2 {
		return ""
	}
	s := ":"
	for i := 0; i+1 < len(args); i += 2 {
		s += fmt.Sprintf(" %v=%v", args[i], args[i+1])
	}
	return s
}

// checkMain is Main's -t: the directory given, or PBS_HOME/sched_priv from
// pbs.conf and -d.
func checkMain(name string, common *daemon.Flags, args []string, policy Policy) int {
	if len(args) > 1 {
		fmt.Fprintf(os.Stderr, "usage: %s -t [DIR]\n", name)
		return CheckBadUsage
	}
	dir := ""
	if len(args) == 1 {
		dir = args[0]
	} else {
		cfg, err := common.Config()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			return CheckBadUsage
		}
		dir = cfg.SchedPriv()
	}
	return Check(dir, policy, time.Now(), os.Stdout)
}
