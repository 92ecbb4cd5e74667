// Command tracejob prints what the daemons logged about a job, in time
// order: the server's, scheduler's and mom's logs of this host and the
// accounting records, for today and, with -n, the days before, as
// OpenPBS's tracejob does.
//
//	tracejob [-a] [-s] [-l] [-m] [-z] [-c count] [-n days] [-p pbs_home] job_id
//
// -a, -s, -l and -m leave out the accounting records, server, scheduler
// and mom logs; -z leaves out a message repeated on consecutive lines;
// -c count leaves out messages seen more than count times. Logs of other
// hosts (moms elsewhere) are read only when their PBS_HOME is given with
// -p on that host.
package main

import "github.com/gopbs/gopbs/internal/cli/tracejob"

func main() { tracejob.Main() }
