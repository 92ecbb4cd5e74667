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
	return runWith(env, args, deps{
		connect: func() (client, error) {
			c, err := env.Connect()
			if err != nil {
				return nil, err // not a typed nil inside the interface
			}
			return c, nil
		},
		now: time.Now,
		loc: time.Local,
	})
}
