package qorder

import (
	"os"

	"github.com/gopbs/gopbs/internal/cmdutil"
)

// Main is qorder's whole main (cmd/qorder calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	env := cmdutil.NewEnv("qorder")
	os.Exit(run(env, os.Args[1:], cmdutil.Connector[client](env)))
}
