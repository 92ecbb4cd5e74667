package filter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Revert is argv[2] of a filter called again to undo what it did.
const Revert = "--revert"

// DefaultTimeout is how long a filter may run when its daemon's setting
// does not say (DESIGN §7).
const DefaultTimeout = 15 * time.Second

// Environment variables every filter gets.
const (
	EnvKind  = "PBS_FILTER_KIND" // "submission" or "activation"
	EnvJobID = "PBS_FILTER_JOB_ID"
)

// Outcome says how a run ended.
type Outcome uint8

// Outcomes of a run.
const (
	// Exited: the program ran and exited; Result.Code is its exit code
	// (128 + the signal for one killed by a signal).
	Exited Outcome = iota
	// TimedOut: it ran past its timeout and was killed.
	TimedOut
	// NotFound: no program at that path.
	NotFound
	// Unrunnable: it exists but could not be started (permissions, not
	// an executable, the system refusing a process).
	Unrunnable
)

// Result is what one run of a filter said.
type Result struct {
	Program string
	Outcome Outcome
	Code    int
	// Stderr is the first line of the program's standard error.
	Stderr string
	// Err says why an Unrunnable program could not start.
	Err     error
	Timeout time.Duration
}

// Exit0 reports whether the program exited with code 0.
func (r Result) Exit0() bool { return r.Outcome == Exited && r.Code == 0 }

// Reason is the result as a user reads it in a message: "exit 3",
// "timed out after 15s", "not found" or "cannot run: ...", followed by
// ": <first stderr line>" when the program wrote one.
func (r Result) Reason() string {
	var s string
	switch r.Outcome {
	case Exited:
		s = "exit " + strconv.Itoa(r.Code)
	case TimedOut:
		s = "timed out after " + r.Timeout.String()
	case NotFound:
		s = "not found"
	default:
		s = "cannot run"
		if r.Err != nil {
			s += ": " + r.Err.Error()
		}
	}
	if r.Stderr != "" {
		s += ": " + r.Stderr
	}
	return s
}

// Run is one call of a program.
type Run struct {
	Program string
	File    string   // the job's JSON file, argv[1]
	Env     []string // added to the daemon's environment
	Timeout time.Duration
	Revert  bool // add argv[2] = Revert
}

// stderrKeep bounds what is kept of a filter's standard error: only its
// first line is shown, and a filter printing megabytes must not grow the
// daemon.
const (
	stderrKeep   = 4096
	stderrShown  = 200
	pipeWaitTime = time.Second
)

// Exec runs one filter to completion, its timeout or ctx's end.
func Exec(ctx context.Context, r Run) Result {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	res := Result{Program: r.Program, Timeout: timeout}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{r.File}
	if r.Revert {
		args = append(args, Revert)
	}
	cmd := exec.CommandContext(runCtx, r.Program, args...)
	cmd.Env = append(os.Environ(), r.Env...)
	cmd.Dir = "/"
	// A group of its own, so that a timeout kills what the filter started
	// too (a shell script's sleep holds its pipes open otherwise).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Wait returns this long after the kill even if a descendant that left
	// the group still holds standard error.
	cmd.WaitDelay = pipeWaitTime
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	res.Stderr = firstLine(stderr.Bytes())
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		res.Outcome = Exited
	case runCtx.Err() == context.DeadlineExceeded:
		// Its own timeout, or the caller's deadline for the whole chain.
		res.Outcome = TimedOut
	case errors.As(err, &exitErr):
		res.Outcome = Exited
		res.Code = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Code = 128 + int(ws.Signal())
		}
	case errors.Is(err, fs.ErrNotExist):
		res.Outcome = NotFound
	default:
		res.Outcome = Unrunnable
		res.Err = unwrapExec(err)
	}
	return res
}

// unwrapExec drops "fork/exec PATH:" from a start error: the message
// names the program already.
func unwrapExec(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// limitedBuffer keeps the first stderrKeep bytes written to it and
// swallows the rest, so the program never blocks on a full pipe.
type limitedBuffer struct{ b bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := stderrKeep - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (l *limitedBuffer) Bytes() []byte { return l.b.Bytes() }

// firstLine is the first non-empty line of b, trimmed and cut to
// stderrShown bytes, with control characters replaced, so that it can go
// into a one-line message.
func firstLine(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) > stderrShown {
			line = strings.ToValidUTF8(line[:stderrShown], "") + "..."
		}
		return strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return '?'
			}
			return r
		}, line)
	}
	return ""
}

// Chain is an ordered list of filters of one kind with what each call
// gets.
type Chain struct {
	Programs []string
	Timeout  time.Duration
	Env      []string
}

// Refusal is the error of a chain that stopped: which filter and why.
type Refusal struct {
	Index  int
	Result Result
	// Why is the caller's reason when the program's result itself was
	// fine but what it did was not (a rewrite that is not valid JSON).
	Why string
}

func (r *Refusal) Error() string {
	why := r.Why
	if why == "" {
		why = r.Result.Reason()
	}
	return fmt.Sprintf("filter %s: %s", r.Result.Program, why)
}

// Run calls the programs in order on file. After each call accept says
// whether the chain goes on: nil, or why not (a *Refusal is taken as it
// is; any other error becomes the Refusal's Why). It returns the results
// of the programs that ran and, when one was refused, the Refusal.
func (c Chain) Run(ctx context.Context, file string, accept func(i int, r Result) error) ([]Result, *Refusal) {
	var results []Result
	for i, p := range c.Programs {
		r := Exec(ctx, Run{Program: p, File: file, Env: c.Env, Timeout: c.Timeout})
		results = append(results, r)
		if err := accept(i, r); err != nil {
			var ref *Refusal
			if !errors.As(err, &ref) {
				ref = &Refusal{Result: r, Why: err.Error()}
			}
			ref.Index = i
			return results, ref
		}
	}
	return results, nil
}

// Revert calls the first n programs again in reverse order with the
// revert argument, and returns their results (last program first).
func (c Chain) Revert(ctx context.Context, file string, n int) []Result {
	var out []Result
	for i := min(n, len(c.Programs)) - 1; i >= 0; i-- {
		out = append(out, Exec(ctx, Run{Program: c.Programs[i], File: file, Env: c.Env, Timeout: c.Timeout, Revert: true}))
	}
	return out
}

// Env renders context variables as environment entries, in the order
// given (name, value, name, value...).
func Env(pairs ...string) []string {
	out := make([]string, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, pairs[i]+"="+pairs[i+1])
	}
	return out
}

// TempFile writes data to a new file only the daemon's user can read, for
// a chain's argv[1]; remove removes it.
func TempFile(data []byte) (path string, remove func(), err error) {
	f, err := os.CreateTemp("", "pbs-filter-*.json")
	if err != nil {
		return "", nil, fmt.Errorf("filter job file: %w", err)
	}
	remove = func() { os.Remove(f.Name()) }
	if _, err := f.Write(data); err != nil {
		f.Close()
		remove()
		return "", nil, fmt.Errorf("filter job file: %w", err)
	}
	if err := f.Close(); err != nil {
		remove()
		return "", nil, fmt.Errorf("filter job file: %w", err)
	}
	return f.Name(), remove, nil
}
