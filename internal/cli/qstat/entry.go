package qstat

import (
	"os"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
)

// Main is qstat's whole main (cmd/qstat calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	env := cmdutil.NewEnv("qstat")
	flush := env.BufferOutput()
	rc := run(env, os.Args[1:])
	if err := flush(); err != nil && rc == 0 {
		env.Errorf("%v", err)
		rc = 1
	}
	os.Exit(rc)
}

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
