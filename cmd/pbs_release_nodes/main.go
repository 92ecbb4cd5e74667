// Command pbs_release_nodes gives sister nodes of a running job back
// before the job ends, as OpenPBS's does:
//
//	pbs_release_nodes [-j job_id] node [node...]
//	pbs_release_nodes [-j job_id] -a
//
// Without -j the job is the one the command runs in (PBS_JOBID). -a
// gives back every node but the job's first. The job's processes on
// those nodes are killed, its part there ends and the nodes are free for
// other jobs; the job's select is lowered with them (a count range's
// maximum too, so the job does not grow onto them again), its exec_host,
// exec_vnode and PBS_NODEFILE no longer name them, and the accounting log
// gets a u record. The job's first node cannot be given back.
package main

import "github.com/gopbs/gopbs/internal/cli/pbsreleasenodes"

func main() { pbsreleasenodes.Main() }
