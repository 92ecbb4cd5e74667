package qalter

import (
	"errors"
	"fmt"
	"os"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/qsubopt"
	"github.com/gopbs/gopbs/proto"
)

// alterer is the part of *proto.Client that qalter uses.
type alterer interface {
	AlterJob(id string, attrs []proto.Attr) error
	ServerName() string
	Close() error
}

// system is what run takes from the process, so that tests can run it
// without a server.
type system struct {
	ctx     qsubopt.Context
	connect func() (alterer, error)
}

// Main is qalter's whole main (cmd/qalter calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	env := cmdutil.NewEnv("qalter")
	os.Exit(run(env, os.Args[1:], processSystem(env)))
}

func processSystem(env *cmdutil.Env) system {
	return system{ctx: qsubopt.ProcessContext(), connect: cmdutil.Connector[alterer](env)}
}

func run(env *cmdutil.Env, args []string, sys system) int {
	if cmdutil.Help(args, true) {
		return env.PrintHelp(qsubopt.AlterUsage + "\n")
	}
	alt, err := qsubopt.ParseAlter(args, sys.ctx)
	if err != nil {
		var ue *qsubopt.UsageError
		if errors.As(err, &ue) {
			env.Errorf("%s", ue.Msg)
			fmt.Fprintln(env.Stderr, qsubopt.AlterUsage)
			return 2
		}
		return env.Fail(err)
	}
	client, err := sys.connect()
	if err != nil {
		return env.Fail(err)
	}
	defer client.Close()
	status := 0
	for _, raw := range alt.JobIDs {
		id := cmdutil.NormalizeJobID(raw)
		if err := client.AlterJob(id, alt.Attrs); err != nil {
			status = env.FailJob(err, id, client.ServerName())
		}
	}
	return status
}
