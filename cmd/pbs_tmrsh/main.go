// Command pbs_tmrsh runs a command on a node of the caller's job, as rsh
// runs it on a host: the words of the command joined by spaces and run by
// the job owner's login shell there, inside the job's confinement and
// session, with the job's environment; standard input, output and error
// are relayed and pbs_tmrsh exits with the command's exit status (255
// when the command could not be run, as ssh does). It is the remote shell
// MPI launchers use inside a job:
//
//	mpirun --mca plm_rsh_agent pbs_tmrsh ...               (Open MPI)
//	mpiexec -launcher rsh -launcher-exec pbs_tmrsh ...     (MPICH)
//
//	pbs_tmrsh [-n] [-x] [-l user] host command [arg...]
//
// -n reads standard input from /dev/null; -l must name the job's owner;
// -x (no X11 forwarding, which ssh agents get) is accepted and ignored.
// Only a process of the job may use it (PBS_JOBID and PBS_JOBCOOKIE), and
// only for the job's own nodes.
package main

import (
	"fmt"
	"os"
	"os/user"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/taskclient"
)

const usage = "usage: pbs_tmrsh [-n] [-x] [-l user] host command [arg...]"

func main() { os.Exit(run(os.Args[1:])) }

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
