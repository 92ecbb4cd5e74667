// Package pbsralter is pbs_ralter's logic; cmd/pbs_ralter documents the command.
package pbsralter

import (
	"fmt"
	"os"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/resvcmd"
)

// Main is pbs_ralter's whole main (cmd/pbs_ralter calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if cmdutil.Help(args, false) {
		fmt.Print(resvcmd.AlterUsage)
		return 0
	}
	req, err := resvcmd.ParseAlter(args, time.Now())
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_ralter: %v\n%s", err, resvcmd.AlterUsage)
		return 2
	}
	env := cmdutil.NewEnv("pbs_ralter")
	c, err := env.Connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	req.ID = resvcmd.FullID(req.ID, c.ServerName())
	reply, err := c.AlterResv(req)
	if err != nil {
		return env.Fail(err)
	}
	resvcmd.PrintState(reply.ID, reply.State)
	return 0
}
