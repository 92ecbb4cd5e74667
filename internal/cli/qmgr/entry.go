package qmgr

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/qmgrparse"
	"github.com/gopbs/gopbs/proto"
)

const usage = "Usage: qmgr [-a] [-c command] [-e] [-n] [-z] [server]\n"

// Exit statuses.
const (
	exitParse   = 1
	exitExec    = 2
	exitConnect = 3
	exitActive  = 4
)

// server is the part of *proto.Client qmgr uses; tests supply a fake.
type server interface {
	Manager(req *proto.ManagerRequest) error
	StatusServer(attrs []string) (proto.Status, error)
	StatusQueues(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error)
	StatusNodes(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error)
	StatusResources(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error)
	StatusSched(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error)
	StatusHooks(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error)
	Close() error
}

// deps is what run takes from the process so that tests can replace it.
type deps struct {
	connect     func() (server, error)
	interactive bool // prompt: standard input and output are terminals
	loc         *time.Location
}

// Main is qmgr's whole main (cmd/qmgr calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	env := cmdutil.NewEnv("qmgr")
	os.Exit(run(env, os.Args[1:], os.Stdin))
}

func run(env *cmdutil.Env, args []string, stdin io.Reader) int {
	if cmdutil.Help(args, false) {
		return env.PrintHelp(usage)
	}
	return runWith(env, args, stdin, deps{
		connect: func() (server, error) {
			c, err := env.Connect()
			if err != nil {
				return nil, err
			}
			return c, nil
		},
		interactive: isTerminal(stdin) && isTerminal(env.Stdout),
		loc:         time.Local,
	})
}

func isTerminal(x any) bool {
	f, ok := x.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

type options struct {
	abort, echo, noExec, quiet bool
	hasCommand                 bool
	command                    string
	server                     string
}

func parseArgs(args []string) (options, error) {
	var o options
	opts, operands, err := getopt.Spec{Short: "ac:enz"}.Parse(args)
	if err != nil {
		return o, err
	}
	for _, opt := range opts {
		switch opt.Name {
		case 'a':
			o.abort = true
		case 'c':
			o.hasCommand, o.command = true, opt.Value
		case 'e':
			o.echo = true
		case 'n':
			o.noExec = true
		case 'z':
			o.quiet = true
		}
	}
	switch len(operands) {
	case 0:
	case 1:
		o.server = operands[0]
	default:
		return o, fmt.Errorf("managing several servers at once is not supported")
	}
	return o, nil
}

func runWith(env *cmdutil.Env, args []string, stdin io.Reader, d deps) int {
	opts, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(env.Stderr, "qmgr: %v\n%s", err, usage)
		return exitParse
	}
	s := &session{
		out:    env.Stdout,
		errw:   env.Stderr,
		opts:   opts,
		loc:    d.loc,
		torque: env.Config != nil && env.Config.Personality == config.Torque,
	}
	if opts.quiet {
		s.errw = io.Discard
	}
	if s.loc == nil {
		s.loc = time.Local
	}
	if !opts.noExec {
		srv, err := d.connect()
		if err != nil {
			name := opts.server
			if name == "" && env.Config != nil {
				name = env.Config.Server
			}
			fmt.Fprintf(s.errw, "qmgr: cannot connect to server %s (%v)\n", name, err)
			return exitConnect
		}
		defer srv.Close()
		s.srv = srv
	}

	if opts.hasCommand {
		// "import hook ... -" reads the file from the standard input.
		s.stdinFile = func() ([]byte, error) { return io.ReadAll(stdin) }
		s.runAll(qmgrparse.Split(opts.command, false))
		return s.status
	}

	r := bufio.NewReader(stdin)
	// Commands come from the standard input: "import hook ... -" reads
	// the lines after it up to a blank line, as print writes them.
	s.stdinFile = func() ([]byte, error) { return readToBlankLine(r) }
	var in qmgrparse.Input
	more := false
	for {
		if d.interactive {
			if more {
				fmt.Fprint(s.out, "Qmgr< ")
			} else {
				fmt.Fprint(s.out, "Qmgr: ")
			}
		}
		line, err := r.ReadString('\n')
		if line != "" {
			var cmds []string
			cmds, more = in.Line(strings.TrimSuffix(line, "\n"))
			if s.runAll(cmds) {
				return s.status
			}
		}
		if err != nil {
			if err != io.EOF {
				fmt.Fprintf(s.errw, "qmgr: reading commands: %v\n", err)
				s.status = exitExec
			}
			break
		}
	}
	s.runAll(in.End())
	if d.interactive {
		// End the line the last prompt left open.
		fmt.Fprintln(s.out)
	}
	return s.status
}

// readToBlankLine reads lines from r up to a blank one (or the end),
// which it consumes: the file an "import ... -" in qmgr's input holds.
func readToBlankLine(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		line, err := r.ReadString('\n')
		if strings.TrimSpace(line) == "" && (err == nil || line == "") {
			if err != nil && err != io.EOF {
				return nil, err
			}
			return out, nil
		}
		out = append(out, line...)
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return nil, err
		}
	}
}
