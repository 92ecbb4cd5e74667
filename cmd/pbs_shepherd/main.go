// Command pbs_shepherd is a job's shepherd: pbs_mom starts one per job
// (pbs_shepherd --shepherd <jobdir>) to run the job script as its owner,
// and one per task of a job (pbsdsh, pbs_tmrsh: pbs_shepherd --task
// <jobdir>),
// wait for it and record its result, so that jobs outlive their mom. It
// is an internal program, installed beside pbs_mom; without it pbs_mom
// runs itself in that role. It is built without cgo (scripts/build.sh):
// the mom resolves the owner through the system's user database and
// passes the account in the job file, so the shepherd needs no C library
// and starts in a fraction of pbs_mom's time.
package main

import (
	"fmt"
	"os"

	"github.com/gopbs/gopbs/internal/shepherd"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == shepherd.TaskArg {
		os.Exit(shepherd.RunTask(os.Args[2]))
	}
	if len(os.Args) != 3 || os.Args[1] != shepherd.Arg {
		fmt.Fprintln(os.Stderr, "usage: pbs_shepherd --shepherd|--task <jobdir> (started by pbs_mom)")
		os.Exit(2)
	}
	os.Exit(shepherd.Run(os.Args[2]))
}
