// Command pbsdsh runs a program on the nodes of the caller's job, as
// OpenPBS's pbsdsh does through the task manager:
//
//	pbsdsh [-c copies] [-s] [-v] [-o] [--] program [arg...]
//	pbsdsh -n node_index [-s] [-v] [-o] [--] program [arg...]
//
// Without -c or -n the program runs once on each entry of the job's node
// list (PBS_NODEFILE: one per MPI process slot), all at once; -c runs
// copies of it on the entries in turn from the first (round robin past
// the last); -n runs it once on entry node_index (from 0). -s runs the
// tasks one after the other; -v reports each task's start and exit
// status on standard error; -o does not wait for the tasks (they run on,
// their output dropped). Each task runs as the job's owner inside the
// job's confinement on its node, with the job's environment plus
// PBS_TASKNUM (1, 2, ...), PBS_NODENUM and PBS_VNODENUM (its entry's
// index); its output and error come back here.
//
// The exit status is 0 when every task started and exited 0, 1 when a
// task could not be started (the reason is printed), else the first
// non-zero exit status of a task.
package main

import "github.com/gopbs/gopbs/internal/cli/pbsdsh"

func main() { pbsdsh.Main() }
