package main

import (
	"os"
	"time"

	"gopbs/internal/cmdutil"
)

func main() { os.Exit(run(cmdutil.NewEnv("qselect"), os.Args[1:])) }

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
