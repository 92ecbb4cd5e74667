// Command pbs_rdel deletes reservations, as OpenPBS's does: the jobs in
// them are deleted, running ones killed. Their owner, an operator or a
// manager may. See resvcmd.DelUsage.
package main

import (
	"fmt"
	"os"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/resvcmd"
)

func main() { os.Exit(run(os.Args[1:])) }

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
