// Command qwatch prints the changes of jobs as pbs_server commits them,
// from its event stream: one line per change, until interrupted, -n
// changes were printed, or the stream ends.
//
//	qwatch [-u user] [-q queue] [-a seq] [-n count] [job_id...]
//
// See usageText for the options and the line format, and README.md
// ("Watching jobs") for the stream and who sees what.
package main

import "github.com/gopbs/gopbs/internal/cli/qwatch"

func main() { qwatch.Main() }
