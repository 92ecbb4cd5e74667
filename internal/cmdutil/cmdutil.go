// Package cmdutil holds what every command shares: loading pbs.conf,
// connecting to the server (directly on the server host, through the local
// mom elsewhere), printing errors the PBS way and turning PBSE codes into
// exit statuses.
package cmdutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

// Env is one command invocation: its name, configuration and output
// streams. Commands take an Env so that tests can run them in-process.
type Env struct {
	Name   string
	Config *config.Config
	Stdout io.Writer
	Stderr io.Writer
}

// NewEnv loads the configuration for command name. A configuration error is
// printed and the process exits 2, as for a usage error.
func NewEnv(name string) *Env {
	// A command lives for one request: collecting garbage each time the
	// heap doubles only costs time (a long listing's decoding did several
	// collections); GOGC, when set, still decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	return &Env{Name: name, Config: cfg, Stdout: os.Stdout, Stderr: os.Stderr}
}

// BufferOutput buffers the command's standard output, for a command
// that prints long listings (a write per line is a system call per line):
// what goes to standard error flushes it first, so that the two streams
// keep their order on a terminal. The function returned flushes what is
// left; the command calls it before it exits.
func (e *Env) BufferOutput() (flush func() error) {
	out := bufio.NewWriterSize(e.Stdout, 64<<10)
	e.Stdout = out
	e.Stderr = flushFirst{out, e.Stderr}
	return out.Flush
}

// flushFirst flushes a buffered stream before each write to another.
type flushFirst struct {
	first *bufio.Writer
	w     io.Writer
}

func (f flushFirst) Write(p []byte) (int, error) {
	f.first.Flush()
	return f.w.Write(p)
}

// Connect dials the server's Unix socket when it exists on this host, and
// otherwise the local mom's or, on a login host, pbs_login's: either
// forwards the request and vouches for the caller.
func (e *Env) Connect() (*proto.Client, error) {
	path := e.Config.ServerSocket()
	if _, err := os.Stat(path); err != nil {
		for _, relay := range []string{e.Config.MomSocket(), e.Config.LoginSocket()} {
			if fileExists(relay) {
				path = relay
				break
			}
		}
	}
	o := proto.DialOptions{Network: "unix", Address: path}
	c, err := proto.Dial(o)
	if err == nil || len(e.Config.Peers) == 0 || path != e.Config.ServerSocket() {
		return c, err
	}
	// A member of a replicated group reopens its socket when it starts
	// or stops leading: a command that finds it shut tries again for a
	// moment rather than fail during a failover.
	deadline := time.Now().Add(groupSocketWait)
	for err != nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		c, err = proto.Dial(o)
	}
	return c, err
}

// groupSocketWait bounds how long a command retries a group member's
// socket that refuses connections (Connect).
const groupSocketWait = 5 * time.Second

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Personality is the dialect for this call's output.
func (e *Env) Personality() config.Personality { return e.Config.Personality }

// Errorf prints "<cmd>: <message>" to stderr.
func (e *Env) Errorf(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "%s: %s\n", e.Name, fmt.Sprintf(format, args...))
}

// JobError prints the PBS form of a per-job failure, "<cmd>: <message> <id>",
// and returns the exit status for it.
func (e *Env) JobError(err error, id string) int {
	msg := strings.TrimRight(errText(err), " ")
	fmt.Fprintf(e.Stderr, "%s: %s %s\n", e.Name, msg, id)
	return ExitStatus(err)
}

// FailJob reports the failure of a per-job request the way every
// id-taking command does: the message in the personality's wording, then
// the id, with a bare sequence number completed by server (as PBS shows
// it), and returns the exit status for it.
func (e *Env) FailJob(err error, id, server string) int {
	return e.JobError(JobError(e.Personality(), err, id), FullJobID(id, server))
}

// Fail prints "<cmd>: <message>" for err and returns its exit status.
func (e *Env) Fail(err error) int {
	fmt.Fprintf(e.Stderr, "%s: %s\n", e.Name, strings.TrimRight(errText(err), " "))
	return ExitStatus(err)
}

func errText(err error) string {
	var pe *proto.Error
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return err.Error()
}

// ExitStatus is the exit status for err: the PBSE code modulo 256, 1 for
// an error without a code, 0 for nil.
func ExitStatus(err error) int {
	if err == nil {
		return 0
	}
	var pe *proto.Error
	if errors.As(err, &pe) {
		if s := pe.Code.ExitStatus(); s != 0 {
			return s
		}
	}
	return 1
}

// NamesServer reports whether name (a server, perhaps with ":port")
// is the server this command reaches: PBS_SERVER, full or short, or
// connected, the name the connection reported ("" before any answer).
// Commands reach only that server, so any other name is refused rather
// than answered for this one.
func (e *Env) NamesServer(name, connected string) bool {
	name, _, _ = strings.Cut(name, ":")
	short := config.ShortName(name)
	if connected != "" && short == connected {
		return true
	}
	return e.Config != nil && e.Config.Server != "" &&
		(name == e.Config.Server || short == config.ShortName(e.Config.Server))
}

// NormalizeJobID trims the surrounding whitespace tools leave on ids (Toil
// passes a trailing newline). The server resolves bare sequence numbers and
// other server suffixes itself.
func NormalizeJobID(id string) string { return strings.TrimSpace(id) }

// Connector returns a function connecting to the server as T, the small
// interface of the client's methods a command uses (tests pass a fake).
// On error it returns T's zero value, never a typed nil inside T.
func Connector[T any](e *Env) func() (T, error) {
	return func() (T, error) {
		c, err := e.Connect()
		if err != nil {
			var zero T
			return zero, err
		}
		return any(c).(T), nil
	}
}

// Help reports whether args ask for help: "--help" before any "--", or
// "-h" alone when the command has no -h option of its own (hasH false).
// The command then prints its usage on stdout and exits 0, without
// reading its configuration or connecting.
func Help(args []string, hasH bool) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--help", a == "-h" && !hasH:
			return true
		}
	}
	return false
}

// PrintHelp writes usage on the command's stdout and returns the exit
// status of a help request.
func (e *Env) PrintHelp(usage string) int {
	fmt.Fprint(e.Stdout, usage)
	return 0
}
