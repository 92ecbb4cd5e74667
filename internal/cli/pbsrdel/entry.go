// Package pbsrdel is pbs_rdel's logic; cmd/pbs_rdel documents the command.
package pbsrdel

import (
	"fmt"
	"os"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/resvcmd"
)

// Main is pbs_rdel's whole main (cmd/pbs_rdel calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if cmdutil.Help(args, false) {
		fmt.Print(resvcmd.DelUsage)
		return 0
	}
	_, ids, err := getopt.Spec{}.Parse(args)
	if err == nil && len(ids) == 0 {
		err = &resvcmd.UsageError{Msg: "name a reservation"}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_rdel: %v\n%s", err, resvcmd.DelUsage)
		return 2
	}
	env := cmdutil.NewEnv("pbs_rdel")
	c, err := env.Connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	status := 0
	for _, id := range ids {
		if err := c.DeleteResv(resvcmd.FullID(id, c.ServerName())); err != nil {
			status = env.Fail(err)
		}
	}
	return status
}
