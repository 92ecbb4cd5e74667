// Command qmove moves jobs that are not running to another queue, where
// they are admitted as a new submission would be.
//
//	qmove destination job_identifier...
package main

import "github.com/gopbs/gopbs/internal/jobcmd"

func main() { jobcmd.Move.Main() }
