// Package jobcmd is the common body of the commands that send one request
// per job id: qdel, qhold, qrls, qsig, qrun, qrerun and qmove. Each is a Command value:
// its options, how they become the request's argument, and the request.
//
// Every operand is a job id in any form the server resolves; surrounding
// whitespace is ignored and each id gets its own request, in order. A
// failure prints "<cmd>: <message> <id>" on stderr (Torque wording in the
// torque personality); the exit status is that of the last failure, 0 when
// all succeeded. Nothing is printed on stdout. Usage errors exit 2 without
// connecting.
package jobcmd

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/proto"
)

// Client is the part of proto.Client these commands use.
type Client interface {
	DeleteJob(id string, opts proto.DeleteOptions) error
	HoldJob(id, types string) error
	ReleaseJob(id, types string) error
	SignalJob(id, sig string) error
	RunJob(id, nodes string) error
	RerunJob(id string, force bool) error
	MoveJob(id, dest string) error
	ServerName() string
	Close() error
}

// Command is one per-job command.
type Command struct {
	Name    string
	Usage   string
	Options string // getopt(3) spec
	// Arg turns the parsed options into the request's argument.
	Arg func(opts []getopt.Option) (string, error)
	// ArgOperand: the first operand is the request's argument instead
	// (qmove's destination), and Arg is not used.
	ArgOperand bool
	// Do sends the request for one job.
	Do func(c Client, id, arg string) error
}

// Main runs the command against the configured server and exits.
func (cmd *Command) Main() {
	env := cmdutil.NewEnv(cmd.Name)
	os.Exit(cmd.Run(env, os.Args[1:], cmdutil.Connector[Client](env)))
}

// Run executes the command with args, connecting through connect.
func (cmd *Command) Run(env *cmdutil.Env, args []string, connect func() (Client, error)) int {
	if cmdutil.Help(args, strings.Contains(cmd.Options, "h")) {
		return env.PrintHelp(cmd.Usage)
	}
	arg, ids, err := cmd.parse(args)
	if err != nil {
		env.Errorf("%v", err)
		fmt.Fprint(env.Stderr, cmd.Usage)
		return 2
	}
	c, err := connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	rc := 0
	for _, id := range ids {
		if err := cmd.Do(c, id, arg); err != nil {
			rc = env.FailJob(err, id, c.ServerName())
		}
	}
	return rc
}

func (cmd *Command) parse(args []string) (arg string, ids []string, err error) {
	opts, operands, err := getopt.Spec{Short: cmd.Options, Permute: true}.Parse(args)
	if err != nil {
		return "", nil, err
	}
	if cmd.ArgOperand {
		if len(operands) == 0 || strings.TrimSpace(operands[0]) == "" {
			return "", nil, fmt.Errorf("no destination given")
		}
		arg, operands = strings.TrimSpace(operands[0]), operands[1:]
	} else if arg, err = cmd.Arg(opts); err != nil {
		return "", nil, err
	}
	seen := map[string]bool{}
	for _, op := range operands {
		// An id given twice is done once, as OpenPBS's qdel J J
		// (the second would fail on a job already gone).
		if id := cmdutil.NormalizeJobID(op); id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", nil, fmt.Errorf("no job id given")
	}
	return arg, ids, nil
}

// last returns the trimmed value of the last occurrence of option name, or
// def; an empty value is a usage error.
func last(opts []getopt.Option, name byte, def string) (string, error) {
	v := def
	for _, o := range opts {
		if o.Name == name {
			if v = strings.TrimSpace(o.Value); v == "" {
				return "", fmt.Errorf("illegal -%c value: %q", name, o.Value)
			}
		}
	}
	return v, nil
}

// holdList is the -h argument of qhold and qrls: letters of u, o, s and p.
func holdList(opts []getopt.Option) (string, error) {
	v, err := last(opts, 'h', "u")
	if err == nil && strings.Trim(v, "uosp") != "" {
		err = fmt.Errorf("illegal -h value: %s", v)
	}
	return v, err
}

// forceFlag is the argument of qdel: "force" for -W force or -p.
const forceFlag = "force"

// Delete is qdel [-W force|delay|suppress_email=N] [-x] [-p] job_id...:
// -W force and -p (Torque's purge) delete without waiting for the
// execution host, -W N sets the seconds between SIGTERM and SIGKILL for
// this delete, -x removes the job's history too (a finished job's alone).
// suppress_email is accepted: this server sends no mail.
var Delete = &Command{
	Name:    "qdel",
	Usage:   "usage: qdel [-W force|delay|suppress_email=N] [-x] [-p] job_id...\n",
	Options: "W:xp",
	Arg: func(opts []getopt.Option) (string, error) {
		d := proto.DeleteOptions{KillDelay: proto.NoKillDelay}
		for _, o := range opts {
			switch o.Name {
			case 'W':
				switch v := strings.TrimSpace(o.Value); {
				case strings.EqualFold(v, forceFlag):
					d.Force = true
				case v != "" && strings.Trim(v, "0123456789") == "":
					n, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						return "", fmt.Errorf("illegal -W value: %s", o.Value)
					}
					d.KillDelay = n
				case strings.HasPrefix(v, "suppress_email="):
				default:
					return "", fmt.Errorf("illegal -W value: %s", o.Value)
				}
			case 'p':
				d.Force = true
			case 'x':
				d.Purge = true
			}
		}
		return d.String(), nil
	},
	Do: func(c Client, id, arg string) error {
		opts, err := proto.ParseDeleteOptions(arg)
		if err != nil {
			return err
		}
		return c.DeleteJob(id, opts)
	},
}

// Hold is qhold [-h hold_list] job_id...: adds holds (default u); which
// holds a caller may set is the server's decision (reference §4.2).
var Hold = &Command{
	Name:    "qhold",
	Usage:   "usage: qhold [-h hold_list] job_id...\n",
	Options: "h:",
	Arg:     holdList,
	Do:      func(c Client, id, arg string) error { return c.HoldJob(id, arg) },
}

// Release is qrls [-h hold_list] job_id...: removes holds (default u).
var Release = &Command{
	Name:    "qrls",
	Usage:   "usage: qrls [-h hold_list] job_id...\n",
	Options: "h:",
	Arg:     holdList,
	Do:      func(c Client, id, arg string) error { return c.ReleaseJob(id, arg) },
}

// Signal is qsig [-s signal] [-a] job_id...: a signal name (with or
// without SIG), a number, or suspend/resume; the server validates it. The
// default is SIGTERM.
var Signal = &Command{
	Name:    "qsig",
	Usage:   "usage: qsig [-s signal] [-a] job_id...\n",
	Options: "s:a",
	Arg:     func(opts []getopt.Option) (string, error) { return last(opts, 's', "SIGTERM") },
	Do:      func(c Client, id, arg string) error { return c.SignalJob(id, arg) },
}

// Run is qrun [-H node[+node...]] [-a] job_id...: starts jobs, on the given
// nodes or where the server chooses.
var Run = &Command{
	Name:    "qrun",
	Usage:   "usage: qrun [-H node[+node...]] [-a] job_id...\n",
	Options: "H:a",
	Arg:     func(opts []getopt.Option) (string, error) { return last(opts, 'H', "") },
	Do:      func(c Client, id, arg string) error { return c.RunJob(id, arg) },
}

// Rerun is qrerun [-W force] [-f] job_id...: kills running jobs and puts
// them back in their queues (operators and managers); -W force (OpenPBS)
// or -f (Torque) reruns a job marked not rerunnable.
var Rerun = &Command{
	Name:    "qrerun",
	Usage:   "usage: qrerun [-W force] [-f] job_id...\n",
	Options: "W:f",
	Arg: func(opts []getopt.Option) (string, error) {
		arg := ""
		for _, o := range opts {
			switch {
			case o.Name == 'f':
				arg = forceFlag
			case strings.EqualFold(strings.TrimSpace(o.Value), forceFlag):
				arg = forceFlag
			default:
				return "", fmt.Errorf("illegal -W value: %s", o.Value)
			}
		}
		return arg, nil
	},
	Do: func(c Client, id, arg string) error { return c.RerunJob(id, arg == forceFlag) },
}

// Move is qmove destination job_id...: moves jobs that are not running
// to the queue destination ("queue" or "queue@server").
var Move = &Command{
	Name:       "qmove",
	Usage:      "usage: qmove destination job_identifier...\n",
	ArgOperand: true,
	Do:         func(c Client, id, arg string) error { return c.MoveJob(id, arg) },
}
