package main

import (
	"os"

	"gopbs/internal/cmdutil"
)

func main() { os.Exit(run(cmdutil.NewEnv("qrun"), os.Args[1:])) }

// run is qrun against the configured server.
func run(env *cmdutil.Env, args []string) int {
	return runWith(env, args, func() (client, error) {
		c, err := env.Connect()
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return c, nil
	})
}
