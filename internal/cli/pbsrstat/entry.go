// Package pbsrstat is pbs_rstat's logic; cmd/pbs_rstat documents the command.
package pbsrstat

import (
	"fmt"
	"os"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/resvcmd"
	"github.com/gopbs/gopbs/proto"
)

// Main is pbs_rstat's whole main (cmd/pbs_rstat calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if cmdutil.Help(args, false) {
		fmt.Print(resvcmd.StatUsage)
		return 0
	}
	opts, ids, err := getopt.Spec{Short: "fFBS"}.Parse(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_rstat: %v\n%s", err, resvcmd.StatUsage)
		return 2
	}
	how := resvcmd.Short
	for _, o := range opts {
		switch o.Name {
		case 'f', 'F':
			how = resvcmd.Full
		case 'B':
			how = resvcmd.Brief
		case 'S':
			how = resvcmd.Short
		}
	}
	env := cmdutil.NewEnv("pbs_rstat")
	flush := env.BufferOutput()
	defer flush()
	c, err := env.Connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	for i, id := range ids {
		ids[i] = resvcmd.FullID(id, c.ServerName())
	}
	sts, errs, err := c.StatusResvs(&proto.StatusRequest{IDs: ids})
	if err != nil {
		return env.Fail(err)
	}
	now := time.Now()
	if how == resvcmd.Short && len(sts) > 0 {
		resvcmd.Header(env.Stdout)
	}
	for _, st := range sts {
		resvcmd.Print(env.Stdout, st, how, now)
	}
	status := 0
	for _, e := range errs {
		status = env.Fail(&proto.Error{Code: e.Code, Text: e.Text})
	}
	return status
}
