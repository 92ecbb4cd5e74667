package main

import (
	"os"

	"gopbs/internal/cmdutil"
)

func main() {
	env := cmdutil.NewEnv("qorder")
	os.Exit(run(env, os.Args[1:], cmdutil.Connector[client](env)))
}
