package main

import (
	"os"

	"gopbs/internal/cmdutil"
)

func main() {
	env := cmdutil.NewEnv("printjob")
	os.Exit(run(env, os.Args[1:], deps{connect: cmdutil.Connector[client](env), uid: os.Getuid}))
}
