package printjob

import (
	"os"

	"github.com/gopbs/gopbs/internal/cmdutil"
)

// Main is printjob's whole main (cmd/printjob calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	env := cmdutil.NewEnv("printjob")
	os.Exit(run(env, os.Args[1:], deps{connect: cmdutil.Connector[client](env), uid: os.Getuid}))
}
