// Command qrerun kills running jobs and puts them back in their queues,
// to run again (operators and managers).
//
//	qrerun [-W force] [-f] job_id...
package main

import "github.com/gopbs/gopbs/internal/jobcmd"

func main() { jobcmd.Rerun.Main() }
