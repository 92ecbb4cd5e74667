package qselect

import (
	"os"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
)

// Main is qselect's whole main (cmd/qselect calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(cmdutil.NewEnv("qselect"), os.Args[1:])) }

// run is qselect against the configured server, with the real clock and
// time zone for -a and -t.
func run(env *cmdutil.Env, args []string) int {
	if cmdutil.Help(args, true) {
		return env.PrintHelp(usageText)
	}
	return runWith(env, args, deps{
		connect: cmdutil.Connector[client](env),
		now:     time.Now,
		loc:     time.Local,
	})
}
