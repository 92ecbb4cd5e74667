package main

import (
	"os"
	"time"

	"gopbs/internal/cmdutil"
)

func main() { os.Exit(run(cmdutil.NewEnv("pbsnodes"), os.Args[1:])) }

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
