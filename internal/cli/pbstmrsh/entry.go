// Package pbstmrsh is pbs_tmrsh's logic; cmd/pbs_tmrsh documents the command.
package pbstmrsh

import (
	"fmt"
	"os"
	"os/user"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/taskclient"
)

const usage = "usage: pbs_tmrsh [-n] [-x] [-l user] host command [arg...]"

// Main is pbs_tmrsh's whole main (cmd/pbs_tmrsh calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	// Only before the program: its own -h is the program's.
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Println(usage)
		return 0
	}
	opts, operands, err := getopt.Spec{Short: "nxl:"}.Parse(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_tmrsh: %v\n%s\n", err, usage)
		return 255
	}
	stdin := true
	for _, o := range opts {
		switch o.Name {
		case 'n':
			stdin = false
		case 'l':
			if u, err := user.Current(); err == nil && o.Value != u.Username {
				fmt.Fprintf(os.Stderr, "pbs_tmrsh: -l %s: a task runs as the job's owner (%s) only\n", o.Value, u.Username)
				return 255
			}
		}
	}
	if len(operands) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		return 255
	}
	env := cmdutil.NewEnv("pbs_tmrsh")
	job, err := taskclient.FromEnv(env.Config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_tmrsh: %v\n", err)
		return 255
	}
	t := taskclient.Task{Node: operands[0], Argv: operands[1:], Shell: true, Stdout: os.Stdout, Stderr: os.Stderr}
	if stdin {
		t.Stdin = os.Stdin
	}
	exit, err := taskclient.Run(job, t)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_tmrsh: %s: %v\n", operands[0], err)
		return 255
	}
	return exit.Status & 0xff
}
