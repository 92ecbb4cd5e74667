package hookrun

import (
	"context"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/atomicfile"
	"github.com/gopbs/gopbs/internal/hook"
)

//go:embed py/zygote.py
var zygoteSrc string

//go:embed py/runtime.py
var runtimeSrc string

//go:embed py/pbs.py
var pbsSrc string

// DefaultPython is Debian's python3, which hooks run with unless the
// daemon's configuration names another (PBS_PYTHON in pbs.conf).
const DefaultPython = "/usr/bin/python3"

// Config is a Runner's configuration.
type Config struct {
	// Python is the interpreter (DefaultPython when empty).
	Python string
	// Dir is where the hooks' scripts (NAME.PY) and configuration files
	// (NAME.CF) are written by Sync: tracebacks show their lines, and
	// pbs.hook_config_filename names the configuration file.
	Dir    string
	Logger hclog.Logger
	// MemLimit bounds a run's address space (RLIMIT_AS), DefaultMemLimit
	// when 0.
	MemLimit int64
	// OutputLimit bounds what a run may send back (its changes, log
	// lines and lookups), DefaultOutputLimit when 0.
	OutputLimit int
}

// Limits of one run, unless the configuration says otherwise.
const (
	DefaultMemLimit    = 2 << 30
	DefaultOutputLimit = 16 << 20
)

// Runner runs hooks, each run a process of its own forked from one
// Python zygote the runner starts on first use (and again should it
// die). Safe for concurrent use; Run holds no lock while a hook runs.
type Runner struct {
	cfg Config
	log hclog.Logger

	mu  sync.Mutex // guards zyg and its control socket's writes
	zyg *zygote
}

// New makes a runner; nothing starts before the first run.
func New(cfg Config) *Runner {
	if cfg.Python == "" {
		cfg.Python = DefaultPython
	}
	if cfg.MemLimit == 0 {
		cfg.MemLimit = DefaultMemLimit
	}
	if cfg.OutputLimit == 0 {
		cfg.OutputLimit = DefaultOutputLimit
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Runner{cfg: cfg, log: cfg.Logger}
}

// Close stops the zygote; runs in progress go on to their end.
func (r *Runner) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.zyg != nil {
		r.zyg.stop()
		r.zyg = nil
	}
}

// ScriptPath is where Sync writes hook name's script.
func (r *Runner) ScriptPath(name string) string { return filepath.Join(r.cfg.Dir, name+".PY") }

// ConfigPath is where Sync writes hook name's configuration file.
func (r *Runner) ConfigPath(name string) string { return filepath.Join(r.cfg.Dir, name+".CF") }

// Sync writes the scripts and configuration files of hooks into Dir
// and removes those of hooks that are gone. The store is the truth:
// these files are what a traceback and pbs.hook_config_filename read.
func (r *Runner) Sync(hooks []*hook.Hook) error {
	if err := os.MkdirAll(r.cfg.Dir, 0o750); err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	keep := map[string]bool{}
	var errs []error
	for _, h := range hooks {
		for _, f := range []struct {
			path string
			data []byte
		}{{r.ScriptPath(h.Name), h.Script}, {r.ConfigPath(h.Name), h.Config}} {
			if len(f.data) == 0 {
				continue
			}
			keep[filepath.Base(f.path)] = true
			if old, err := os.ReadFile(f.path); err == nil && string(old) == string(f.data) {
				continue
			}
			if err := atomicfile.Write(f.path, f.data, 0o640); err != nil {
				errs = append(errs, err)
			}
		}
	}
	ents, err := os.ReadDir(r.cfg.Dir)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, e := range ents {
		n := e.Name()
		if (strings.HasSuffix(n, ".PY") || strings.HasSuffix(n, ".CF")) && !keep[n] {
			os.Remove(filepath.Join(r.cfg.Dir, n))
		}
	}
	return errors.Join(errs...)
}

// Credential is who a pbsuser hook runs as.
type Credential struct {
	User     string
	UID, GID uint32
}

// Request is one run of one hook.
type Request struct {
	Hook *hook.Hook
	// Event is the event as data: "type" (its number), "requestor",
	// "requestor_host" and, by event, "job", "resv", "src_queue",
	// "vnode_list", "job_list" (see the pbs module).
	Event map[string]any
	// Settable says what the hook may change, by object ("job",
	// "resv", "vnode"): a list of attribute names, or "*".
	Settable map[string]any
	// Server is the server's name and attributes, for pbs.server().
	Server map[string]any
	// ResourceTypes types resource values ("size", "duration", "long",
	// "float", "boolean", "string").
	ResourceTypes map[string]string
	LocalNode     string
	// As is who the hook runs as; nil for the daemon's own user.
	As *Credential
	// Environ is set in the hook's environment.
	Environ map[string]string
	// Query answers the hook's lookups (pbs.server().job(id), queue,
	// vnode...): what and name as the module asks, the value as data.
	// It is called from Run's goroutine with no lock held; nil answers
	// every lookup with an error.
	Query func(what, name string) (any, error)
}

// Outcome is how a run ended.
type Outcome uint8

// Outcomes.
const (
	// Accepted: the hook accepted the event, or ended without a verdict.
	Accepted Outcome = iota
	// Rejected: the hook called reject(); Message is its message.
	Rejected
	// Failed: the hook raised; Message is the exception, Traceback its
	// traceback.
	Failed
	// Alarm: the hook ran past its alarm and was killed.
	Alarm
	// Crashed: the run's process ended without a verdict (killed, out of
	// memory, too much output), or could not start; Message says why.
	Crashed
)

func (o Outcome) String() string {
	return [...]string{"accepted", "rejected", "failed", "alarm", "crashed"}[o]
}

// Change is one change a hook made to an object of its event.
type Change struct {
	Name     string `json:"name"`
	Resource string `json:"resource"`
	Value    string `json:"value"`
	Unset    bool   `json:"unset"`
	// Vars is a whole Variable_List, when Name is one.
	Vars [][2]string `json:"vars"`
}

// Result is what one run said.
type Result struct {
	Outcome   Outcome
	Message   string
	Traceback string
	// Changes are what the hook changed on the event's job or
	// reservation; Vnodes what it changed on each vnode of vnode_list.
	Changes []Change
	Vnodes  map[string][]Change
	// Actions are what the hook asked for beside changes
	// ("scheduler_restart_cycle").
	Actions map[string]bool
	// Launch is what an execjob_launch hook left of the job's program,
	// its arguments and its environment (nil at other events).
	Launch  *Launch
	Elapsed time.Duration
}

// Launch is the program an execjob_launch event starts, as the hook left
// it (pbs.event().progname, argv, env).
type Launch struct {
	Progname string            `json:"progname"`
	Argv     []string          `json:"argv"`
	Env      map[string]string `json:"env"`
}

// Refusal is a run's outcome as the requester sees it, in OpenPBS's
// words: "" for an accept, else the hook's own message for a rejection
// (or "<event> request rejected by '<hook>'" when it gave none), and for a
// hook that raised, died or ran past its alarm the words OpenPBS uses,
// which tell the user to ask the admin (the why is in the daemon's log).
func (res Result) Refusal(e hook.Event, name string) string {
	switch res.Outcome {
	case Accepted:
		return ""
	case Rejected:
		if res.Message == "" {
			return fmt.Sprintf("%s request rejected by '%s'", e, name)
		}
		return res.Message
	case Alarm:
		return fmt.Sprintf("request rejected as filter hook '%s' got an alarm call. Please inform Admin", name)
	}
	return fmt.Sprintf("request rejected as filter hook '%s' encountered an exception. Please inform Admin", name)
}

// Log writes a run's outcome into the daemon's log as OpenPBS logs it:
// an accept at debug level, a rejection with its message, an alarm or an
// exception (whose traceback the runner logged) as warnings.
func (res Result) Log(log hclog.Logger, e hook.Event, h *hook.Hook) {
	switch res.Outcome {
	case Accepted:
		log.Debug("hook accepted", "event", e.String(), "hook", h.Name, "took", res.Elapsed)
	case Rejected:
		log.Info(fmt.Sprintf("%s request rejected by '%s'", e, h.Name), "message", res.Message)
	case Alarm:
		log.Warn(fmt.Sprintf("alarm call while running %s hook '%s', request rejected", e, h.Name), "alarm", h.Alarm)
	default:
		log.Warn(fmt.Sprintf("%s hook '%s' encountered an exception, request rejected", e, h.Name), "error", res.Message)
	}
}

// Compile checks that script compiles, in a run of its own bounded by
// timeout: nil, or Python's message naming the line.
func (r *Runner) Compile(ctx context.Context, name string, script []byte, timeout time.Duration) error {
	return r.Check(ctx, name, ".py", script, timeout)
}

// Check checks a hook's file of the kind its suffix says: a script
// (".py") compiles, a configuration file (".json", ".ini") reads; other
// kinds are not checked, as OpenPBS does not check them.
func (r *Runner) Check(ctx context.Context, name, kind string, data []byte, timeout time.Duration) error {
	path := r.ScriptPath(name)
	if kind != ".py" {
		path = r.ConfigPath(name)
	}
	if kind != ".py" && kind != ".json" && kind != ".ini" {
		return nil
	}
	res := r.run(ctx, map[string]any{"compile": string(data), "kind": kind, "script_path": path}, nil, name, timeout)
	switch {
	case res.Outcome != Accepted:
		return fmt.Errorf("the hook could not be checked: %s", res.Message)
	case res.Message != "":
		return errors.New(res.Message)
	}
	return nil
}

// Run runs req's hook on its event, killed with its process group at
// the hook's alarm (or when ctx ends).
func (r *Runner) Run(ctx context.Context, req Request) Result {
	h := req.Hook
	msg := map[string]any{
		"hook": map[string]any{
			"name": h.Name, "type": "site", "debug": h.Debug, "user": h.User.String(),
			"alarm": h.Alarm, "freq": h.Freq, "order": h.Order, "fail_action": h.FailAction.String(),
		},
		"event":          req.Event,
		"settable":       req.Settable,
		"server":         req.Server,
		"resource_types": req.ResourceTypes,
		"local_node":     req.LocalNode,
		"script":         string(h.Script),
		"script_path":    r.ScriptPath(h.Name),
		"rlimit_as":      r.cfg.MemLimit,
		"environ":        req.Environ,
		"cwd":            r.cfg.Dir,
	}
	if len(h.Config) > 0 {
		// pbs.hook_config_filename, and the environment OpenPBS sets.
		env := map[string]string{"PBS_HOOK_CONFIG_FILE": r.ConfigPath(h.Name)}
		for k, v := range req.Environ {
			env[k] = v
		}
		msg["config_file"], msg["environ"] = r.ConfigPath(h.Name), env
	}
	if req.As != nil {
		msg["uid"], msg["gid"], msg["user"] = req.As.UID, req.As.GID, req.As.User
		msg["cwd"] = "/"
	}
	if !h.Debug {
		return r.run(ctx, msg, req.Query, h.Name, time.Duration(h.Alarm)*time.Second)
	}
	// debug = true: the run's input and output go into the daemon's log
	// (OpenPBS writes them to files beside the hook), to see what the hook
	// was given and what it did.
	in, _ := json.Marshal(map[string]any{"event": req.Event, "settable": req.Settable})
	r.log.Info("hook debug: the event", "hook", h.Name, "input", string(in))
	out := r.run(ctx, msg, req.Query, h.Name, time.Duration(h.Alarm)*time.Second)
	changes, _ := json.Marshal(map[string]any{"changes": out.Changes, "vnodes": out.Vnodes, "actions": out.Actions, "launch": out.Launch})
	r.log.Info("hook debug: the outcome", "hook", h.Name, "outcome", out.Outcome.String(), "message", out.Message, "output", string(changes))
	return out
}

// run is one run: a channel to a process forked by the zygote, the
// request sent, messages read until the verdict, the alarm, or the end.
func (r *Runner) run(ctx context.Context, msg map[string]any, query func(string, string) (any, error), name string, alarm time.Duration) Result {
	start := time.Now()
	res := func(o Outcome, format string, args ...any) Result {
		return Result{Outcome: o, Message: fmt.Sprintf(format, args...), Elapsed: time.Since(start)}
	}
	conn, err := r.fork()
	if err != nil {
		r.log.Error("hook could not start", "hook", name, "error", err)
		return res(Crashed, "cannot start: %v", err)
	}
	defer conn.Close()
	deadline := start.Add(alarm)
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	ch := &channel{conn: conn, budget: r.cfg.OutputLimit}
	var hello struct {
		Pid int `json:"pid"`
	}
	if err := ch.recv(&hello); err != nil || hello.Pid <= 0 {
		return res(Crashed, "the run did not start: %v", err)
	}
	kill := func() { syscall.Kill(-hello.Pid, syscall.SIGKILL) }
	ended := func(err error) Result {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			kill()
			if ctx.Err() != nil {
				return res(Crashed, "stopped: %v", ctx.Err())
			}
			return res(Alarm, "ran past its alarm of %v and was killed", alarm)
		}
		kill()
		return res(Crashed, "%v", err)
	}
	if err := ch.send(msg); err != nil {
		return ended(err)
	}
	for {
		var m struct {
			Log    []json.RawMessage `json:"log"`
			Job    string            `json:"job"`
			Query  string            `json:"query"`
			Name   string            `json:"name"`
			Result *struct {
				Outcome   string              `json:"outcome"`
				Message   string              `json:"message"`
				Traceback string              `json:"traceback"`
				Changes   []Change            `json:"changes"`
				Vnodes    map[string][]Change `json:"vnodes"`
				Actions   map[string]bool     `json:"actions"`
				Launch    *Launch             `json:"launch"`
			} `json:"result"`
		}
		if err := ch.recv(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return res(Crashed, "the hook's process ended without a verdict (killed, or out of memory)")
			}
			return ended(err)
		}
		switch {
		case m.Log != nil:
			r.hookLog(name, m.Job, m.Log)
		case m.Query != "":
			reply := map[string]any{}
			if query == nil {
				reply["error"] = "pbs.server() lookups are not available at this event"
			} else if v, err := query(m.Query, m.Name); err != nil {
				reply["error"] = err.Error()
			} else {
				reply["value"] = v
			}
			if err := ch.send(reply); err != nil {
				return ended(err)
			}
		case m.Result != nil:
			out := Result{Message: m.Result.Message, Traceback: m.Result.Traceback, Changes: m.Result.Changes,
				Vnodes: m.Result.Vnodes, Actions: m.Result.Actions, Launch: m.Result.Launch, Elapsed: time.Since(start)}
			switch m.Result.Outcome {
			case "accept", "compiled":
				out.Outcome = Accepted
			case "reject":
				out.Outcome = Rejected
			case "exception":
				out.Outcome = Failed
				r.log.Error("hook raised an exception", "hook", name, "exception", out.Message, "traceback", out.Traceback)
			default:
				return res(Crashed, "unknown verdict %q", m.Result.Outcome)
			}
			return out
		default:
			kill()
			return res(Crashed, "the hook's process sent a message this daemon does not know")
		}
	}
}

// hookLog writes a pbs.logmsg line into the daemon's log.
func (r *Runner) hookLog(name, job string, raw []json.RawMessage) {
	var level int
	var text string
	if len(raw) != 2 || json.Unmarshal(raw[0], &level) != nil || json.Unmarshal(raw[1], &text) != nil {
		return
	}
	args := []any{"hook", name}
	if job != "" {
		args = append(args, "job", job)
	}
	switch {
	case level == 3 || level == 1: // LOG_ERROR, EVENT_ERROR
		r.log.Error(text, args...)
	case level == 4: // LOG_WARNING
		r.log.Warn(text, args...)
	case level == 7 || level >= 0x80: // LOG_DEBUG, EVENT_DEBUG*
		r.log.Debug(text, args...)
	default:
		r.log.Info(text, args...)
	}
}

// channel frames a run's messages: a 4-byte big-endian length and JSON.
type channel struct {
	conn   net.Conn
	budget int // bytes the run may still send
}

func (c *channel) send(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(data)), uint32(len(data)))
	_, err = c.conn.Write(append(frame, data...))
	return err
}

func (c *channel) recv(v any) error {
	var hdr [4]byte
	if _, err := io.ReadFull(c.conn, hdr[:]); err != nil {
		return err
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n > c.budget {
		return fmt.Errorf("the hook sent more than its output limit allows (%d bytes)", n)
	}
	c.budget -= n
	data := make([]byte, n)
	if _, err := io.ReadFull(c.conn, data); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return json.Unmarshal(data, v)
}
