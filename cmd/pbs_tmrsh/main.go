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

import "github.com/gopbs/gopbs/internal/cli/pbstmrsh"

func main() { pbstmrsh.Main() }
