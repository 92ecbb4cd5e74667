package pbsnodes

import (
	"os"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
)

// Main is pbsnodes's whole main (cmd/pbsnodes calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(cmdutil.NewEnv("pbsnodes"), os.Args[1:])) }

// run is pbsnodes against the configured server, with the real clock (JSON
// timestamp) and time zone (ctime strings).
func run(env *cmdutil.Env, args []string) int {
	if cmdutil.Help(args, false) {
		return env.PrintHelp(usageText)
	}
	return runWith(env, args, deps{
		connect: cmdutil.Connector[client](env),
		now:     time.Now,
		loc:     time.Local,
	})
}
