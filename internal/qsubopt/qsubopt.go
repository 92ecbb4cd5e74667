package qsubopt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/x11"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Option letters. qsub takes the union of Torque's and OpenPBS's; qalter
// takes the attribute options they share.
const (
	qsubOptions   = "a:A:b:c:C:d:D:e:EfF:hi:Ij:J:k:K:l:L:m:M:nN:o:p:P:q:r:R:S:t:T:u:v:Vw:W:Xxz"
	qalterOptions = "a:A:c:e:h:j:k:l:m:M:N:o:p:P:r:R:S:u:v:W:"
)

// SubmitUsage and AlterUsage are the usage lines the commands print after
// a UsageError.
const (
	SubmitUsage = "usage: qsub [-a date_time] [-A account] [-c checkpoint] [-C directive_prefix]\n" +
		"            [-d|-w workdir] [-e path] [-h] [-I] [-j oe|eo|n] [-J range] [-k keep]\n" +
		"            [-l resource_list] [-m mail_points] [-M user_list] [-N name] [-o path]\n" +
		"            [-p priority] [-P project] [-q destination] [-r y|n] [-S path_list]\n" +
		"            [-t range] [-u user_list] [-v variable_list] [-V] [-W attr=value[,...]]\n" +
		"            [-X (with -I)] [-z] [script | -- executable [args...]]\n" +
		"       qsub --version"
	AlterUsage = "usage: qalter [-a date_time] [-A account] [-c checkpoint] [-e path] [-h hold_list]\n" +
		"              [-j oe|eo|n] [-k keep] [-l resource_list] [-m mail_points]\n" +
		"              [-M user_list] [-N name] [-o path] [-p priority] [-P project] [-r y|n]\n" +
		"              [-S path_list] [-u user_list] [-v variable_list] [-W attr=value[,...]]\n" +
		"              job_identifier..."
)

// UsageError is a bad command line or directive. The commands print it with
// their usage line and exit 2.
type UsageError struct {
	Msg string
}

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ErrDOSScript refuses a script with DOS line ends, in OpenPBS's words.
const ErrDOSScript = constError("script is written in DOS/Windows text format")

// constError lets sentinel errors be constants.
type constError string

func (e constError) Error() string { return string(e) }

// Context is everything outside the arguments that qsub and qalter look at.
type Context struct {
	Environ  []string  // "NAME=value" entries, as os.Environ returns them
	Cwd      string    // the absolute current directory
	Host     string    // the short name of this host
	Now      time.Time // for -a; its location is the local time zone
	ReadFile func(path string) ([]byte, error)
	Stdin    io.Reader // the script when no operand names one
}

// Submission is a parsed qsub invocation.
type Submission struct {
	// Version is set for "qsub --version"; nothing else is filled in.
	Version bool
	// Quiet is -z: print nothing on success.
	Quiet bool
	// Block is -W block=true: wait for the job to end and exit with its
	// exit status.
	Block bool
	// Interactive is -I: qsub submits the job with the port it listens
	// on (proto.SubmitRequest.Interactive, which qsub fills in), waits
	// for the job to start and relays its shell.
	Interactive bool
	// X11 is -X: the interactive job's X clients are shown on Display
	// (the user's DISPLAY), through qsub.
	X11     bool
	Display x11.Display
	// ConnectWait is Torque's -b: how long qsub keeps trying to connect
	// to a server it cannot reach (0: it tries once).
	ConnectWait time.Duration
	Request     *proto.SubmitRequest
}

// Alteration is a parsed qalter invocation.
type Alteration struct {
	Attrs  []proto.Attr
	JobIDs []string
}

// ParseSubmit parses qsub's arguments (without the program name), reads the
// script, applies its directives and builds the request. A *UsageError
// reports a bad option or directive; other errors (an unreadable script,
// -I) are reported as they are.
func ParseSubmit(args []string, c Context) (*Submission, error) {
	spec := getopt.Spec{Short: qsubOptions, Long: []string{"version"}}
	execMode := terminatorIndex(spec, args) >= 0
	opts, operands, err := spec.Parse(args)
	if err != nil {
		return nil, usagef("%v", err)
	}
	for _, o := range opts {
		if o.Long == "version" {
			return &Submission{Version: true}, nil
		}
	}
	if !path.IsAbs(c.Cwd) {
		return nil, fmt.Errorf("cannot tell the current directory (got %q)", c.Cwd)
	}
	cl := newSource(false)
	for _, o := range opts {
		if err := cl.apply(cmdSubmit, o, &c); err != nil {
			return nil, err
		}
	}

	var script []byte
	var name string
	switch {
	case execMode && cl.interactive:
		return nil, usagef("-I starts a shell: it takes no executable after --")
	case execMode:
		if len(operands) == 0 {
			return nil, usagef("no executable after --")
		}
		script = execScript(operands)
		name = path.Base(operands[0])
	case len(operands) > 1:
		return nil, usagef("unexpected argument %q after the script", operands[1])
	case len(operands) == 1:
		if operands[0] == "" {
			return nil, usagef("empty script path")
		}
		if c.ReadFile == nil {
			return nil, errors.New("cannot read script files here")
		}
		script, err = c.ReadFile(operands[0])
		if err != nil {
			return nil, fmt.Errorf("cannot read script file %s: %w", operands[0], unwrapPathError(err))
		}
		name = path.Base(operands[0])
	case cl.interactive:
		// Standard input is the job's, once it runs: commands for its
		// shell when it is not a terminal (OpenPBS).
		name = "STDIN"
	default:
		if c.Stdin != nil {
			script, err = io.ReadAll(c.Stdin)
			if err != nil {
				return nil, fmt.Errorf("cannot read the script from standard input: %w", err)
			}
		}
		name = "STDIN"
	}

	if !execMode && bytes.Contains(script, []byte("\r\n")) {
		// As OpenPBS's qsub: /bin/sh would run each line with a CR on
		// its last word, and the directives read one way and the shell
		// another.
		return nil, ErrDOSScript
	}
	ds := newSource(true)
	if !execMode {
		prefix := DefaultPrefix
		if v, ok := lookupEnv(c.Environ, "PBS_DPREFIX"); ok && v != "" {
			prefix = v
		}
		if cl.prefixSet {
			prefix = cl.prefix
		}
		for _, d := range ScanDirectives(script, prefix) {
			if err := ds.applyDirective(spec, d, &c); err != nil {
				return nil, err
			}
		}
	}

	attrs, err := exclusive(merge(cl, ds), cl.nodeExclusive || ds.nodeExclusive)
	if err != nil {
		return nil, err
	}
	if execMode {
		// The program after -- runs directly, as OpenPBS runs it: -S
		// names the shell of a script, and would be handed the two
		// lines that start the program.
		attrs = slices.DeleteFunc(attrs, func(a proto.Attr) bool { return a.Name == proto.AttrShellPathList })
	}
	interactive := cl.interactive || ds.interactive
	if interactive {
		if err := checkInteractive(attrs); err != nil {
			return nil, err
		}
	}
	forwardX11 := cl.x11 || ds.x11
	var display x11.Display
	if forwardX11 {
		if !interactive {
			return nil, usagef("-X forwards an interactive job's X11 clients: use it with -I")
		}
		v, _ := lookupEnv(c.Environ, "DISPLAY")
		if v == "" {
			return nil, usagef("-X needs DISPLAY set: the display the job's X11 clients are shown on")
		}
		if display, err = x11.ParseDisplay(v); err != nil {
			return nil, usagef("-X: %v", err)
		}
	}
	// qsub owns these; a -W that names them must not produce a second copy.
	attrs = dropAttrs(attrs, proto.AttrVariableList, proto.AttrSubmitArguments)
	if !hasAttr(attrs, proto.AttrJobName) {
		// The script's file name, checked as the server checks it at
		// submission (OpenPBS lets IFL verify it the same way).
		if err := model.CheckJobName(name, false); err != nil {
			return nil, usagef("illegal -N value %q: %v (the job is named after its script unless -N names it)", name, err)
		}
		attrs = append(attrs, proto.Attr{Name: proto.AttrJobName, Value: name})
	}
	attrs = append(attrs,
		proto.Attr{Name: proto.AttrVariableList, Value: EncodeVariableList(submitVars(cl, ds, &c))},
		proto.Attr{Name: proto.AttrSubmitArguments, Value: strings.Join(args, " ")},
	)
	queue := ds.queue
	if cl.queueSet {
		queue = cl.queue
	}
	block := false
	for _, a := range attrs {
		if a.Name == proto.AttrBlock && a.Resource == "" {
			block = a.Value == resc.FormatBool(true)
		}
	}
	wait := ds.connectWait
	if cl.connectWaitSet {
		wait = cl.connectWait
	}
	return &Submission{
		Quiet:       cl.quiet || ds.quiet,
		Block:       block && !interactive,
		Interactive: interactive,
		X11:         forwardX11,
		Display:     display,
		ConnectWait: wait,
		Request:     &proto.SubmitRequest{Queue: queue, Attrs: attrs, Script: script},
	}, nil
}

// checkInteractive refuses what an interactive job cannot be, as
// OpenPBS's qsub does: an array (one terminal, one shell) and a
// rerunnable job (its terminal cannot be given back on a rerun).
func checkInteractive(attrs []proto.Attr) error {
	for _, a := range attrs {
		switch {
		case a.Resource != "":
		case a.Name == proto.AttrArrayIndices:
			return usagef("interactive and array job submission cannot be used together")
		case a.Name == proto.AttrRerunable && a.Value == resc.FormatBool(true):
			return usagef("illegal -r value \"y\": interactive jobs are not rerunnable")
		}
	}
	return nil
}

// ParseAlter parses qalter's arguments (without the program name).
func ParseAlter(args []string, c Context) (*Alteration, error) {
	spec := getopt.Spec{Short: qalterOptions}
	opts, operands, err := spec.Parse(args)
	if err != nil {
		return nil, usagef("%v", err)
	}
	cl := newSource(false)
	for _, o := range opts {
		if err := cl.apply(cmdAlter, o, &c); err != nil {
			return nil, err
		}
	}
	attrs := cl.attrs
	if len(cl.vars) > 0 {
		// OpIncr: the variables are added to the job's list; replacing it
		// would drop the PBS_O_ variables the job was submitted with.
		attrs = append(attrs, proto.Attr{Name: proto.AttrVariableList, Value: EncodeVariableList(cl.vars), Op: proto.OpIncr})
	}
	if len(attrs) == 0 {
		return nil, usagef("no attribute to change")
	}
	if len(operands) == 0 {
		return nil, usagef("no job identifier")
	}
	return &Alteration{Attrs: attrs, JobIDs: operands}, nil
}

// terminatorIndex finds the "--" that ends qsub's options, if any: a "--"
// that is the value of the option before it, or that follows the script
// operand, is not one.
func terminatorIndex(spec getopt.Spec, args []string) int {
	for i, a := range args {
		if a != "--" {
			continue
		}
		_, ops, err := spec.Parse(args[:i])
		if err != nil {
			continue // most likely "--" is the missing value of args[i-1]
		}
		if len(ops) > 0 {
			return -1
		}
		return i
	}
	return -1
}

// execScript is the job script for "qsub -- executable args...".
func execScript(argv []string) []byte {
	var b strings.Builder
	b.WriteString("#!/bin/sh\nexec")
	for _, a := range argv {
		b.WriteByte(' ')
		b.WriteString(ShellQuote(a))
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

// unwrapPathError drops the *fs.PathError wrapper, whose text would repeat
// the path the message already names.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func merge(cl, ds *source) []proto.Attr {
	attrs := append([]proto.Attr(nil), cl.attrs...)
	for _, a := range ds.attrs {
		if _, ok := cl.index[a.FullName()]; !ok {
			attrs = append(attrs, a)
		}
	}
	return attrs
}

// exclusive applies Torque's -n (node exclusive): the job's place
// sharing becomes excl, beside the arrangement it names, if any.
func exclusive(attrs []proto.Attr, on bool) ([]proto.Attr, error) {
	if !on {
		return attrs, nil
	}
	for i, a := range attrs {
		if a.Name != proto.AttrResourceList || a.Resource != proto.ResPlace {
			continue
		}
		p, err := resc.ParsePlace(a.Value)
		if err != nil {
			return nil, usagef("illegal -l value place=%s: %v", a.Value, err)
		}
		switch p.Sharing {
		case resc.SharingExcl, resc.SharingExclHost:
			return attrs, nil
		case resc.SharingShared:
			return nil, usagef("-n (node exclusive) conflicts with place=%s", a.Value)
		}
		attrs[i].Value = a.Value + ":excl"
		return attrs, nil
	}
	return append(attrs, proto.Attr{Name: proto.AttrResourceList, Resource: proto.ResPlace, Value: "excl"}), nil
}

func dropAttrs(attrs []proto.Attr, names ...string) []proto.Attr {
	out := attrs[:0]
	for _, a := range attrs {
		keep := true
		for _, n := range names {
			if a.Name == n && a.Resource == "" {
				keep = false
			}
		}
		if keep {
			out = append(out, a)
		}
	}
	return out
}

func hasAttr(attrs []proto.Attr, name string) bool {
	for _, a := range attrs {
		if a.Name == name && a.Resource == "" {
			return true
		}
	}
	return false
}

// submitVars builds the job's Variable_List: the PBS_O_ variables, then the
// whole environment for -V, then -v's variables.
func submitVars(cl, ds *source, c *Context) []Var {
	get := func(n string) string { v, _ := lookupEnv(c.Environ, n); return v }
	logname, ok := lookupEnv(c.Environ, "LOGNAME")
	if !ok {
		logname = get("USER")
	}
	vars := []Var{{Name: "PBS_O_HOME", Value: get("HOME")}}
	if v, ok := lookupEnv(c.Environ, "LANG"); ok {
		vars = append(vars, Var{Name: "PBS_O_LANG", Value: v})
	}
	vars = append(vars, Var{Name: "PBS_O_LOGNAME", Value: logname}, Var{Name: "PBS_O_PATH", Value: get("PATH")})
	if v, ok := lookupEnv(c.Environ, "MAIL"); ok {
		vars = append(vars, Var{Name: "PBS_O_MAIL", Value: v})
	}
	vars = append(vars,
		Var{Name: "PBS_O_SHELL", Value: get("SHELL")},
		Var{Name: "PBS_O_WORKDIR", Value: c.Cwd},
		Var{Name: "PBS_O_SYSTEM", Value: "Linux"},
		Var{Name: "PBS_O_HOST", Value: c.Host},
	)
	fixed := len(vars)
	index := map[string]int{}
	for i, v := range vars {
		index[v.Name] = i
	}
	add := func(v Var) {
		i, ok := index[v.Name]
		switch {
		case ok && i < fixed:
		case ok:
			vars[i].Value = v.Value
		default:
			index[v.Name] = len(vars)
			vars = append(vars, v)
		}
	}
	if cl.exportAll || ds.exportAll {
		for _, kv := range c.Environ {
			if k, v, ok := strings.Cut(kv, "="); ok && validVarName(k) {
				if _, seen := index[k]; !seen {
					add(Var{Name: k, Value: v})
				}
			}
		}
	}
	for _, v := range cl.vars {
		add(v)
	}
	for _, v := range ds.vars {
		if _, ok := cl.varIndex[v.Name]; !ok {
			add(v)
		}
	}
	return vars
}
