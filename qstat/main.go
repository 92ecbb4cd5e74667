package main

import (
	"os"
	"time"

	"gopbs/internal/cmdutil"
)

func main() { os.Exit(run(cmdutil.NewEnv("qstat"), os.Args[1:])) }

// run is qstat against the configured server, with the real clock and
// time zone.
func run(env *cmdutil.Env, args []string) int {
	if cmdutil.Help(args, false) {
		return env.PrintHelp(usage(env.Personality()))
	}
	return runWith(env, args, deps{
		connect: cmdutil.Connector[client](env),
		now:     time.Now,
		loc:     time.Local,
	})
}
