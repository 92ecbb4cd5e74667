// Command pbs_mom is the node agent of one execution host: it reports the
// host to the server, runs jobs as their owners, and forwards the
// commands typed on its host to the server. It stays in the foreground
// and logs to stderr and PBS_HOME/mom_logs.
//
// The same binary can be each job's shepherd (pbs_mom --shepherd
// <jobdir>), an internal form used when pbs_shepherd is not installed
// beside it.
package main

import "github.com/gopbs/gopbs/internal/momd"

func main() { momd.Main() }
