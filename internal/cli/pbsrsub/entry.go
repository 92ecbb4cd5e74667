// Package pbsrsub is pbs_rsub's logic; cmd/pbs_rsub documents the command.
package pbsrsub

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/resvcmd"
	"github.com/gopbs/gopbs/proto"
)

// Main is pbs_rsub's whole main (cmd/pbs_rsub calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if cmdutil.Help(args, false) {
		fmt.Print(resvcmd.SubUsage)
		return 0
	}
	sub, err := resvcmd.ParseSubmit(args, time.Now(), os.Getenv("PBS_TZID"))
	var tzErr *resvcmd.TZError
	switch {
	case errors.As(err, &tzErr):
		fmt.Fprintf(os.Stderr, "pbs_rsub error: %v\n", err)
		return 2
	case err != nil:
		fmt.Fprintf(os.Stderr, "pbs_rsub: %v\n%s", err, resvcmd.SubUsage)
		return 2
	}
	env := cmdutil.NewEnv("pbs_rsub")
	c, err := env.Connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	reply, err := c.SubmitResv(&sub.Request)
	if err != nil {
		return env.Fail(err)
	}
	if sub.Wait <= 0 || reply.State != proto.ResvUnconfirmed {
		resvcmd.PrintState(reply.ID, reply.State)
		return 0
	}
	// -I: the scheduler's verdict, polled.
	deadline := time.Now().Add(sub.Wait)
	for {
		sts, errs, err := c.StatusResvs(&proto.StatusRequest{IDs: []string{reply.ID}, Attrs: []string{proto.AttrResvState}})
		switch {
		case err != nil:
			return env.Fail(err)
		case len(errs) > 0:
			fmt.Printf("%s DENIED\n", reply.ID)
			fmt.Fprintf(os.Stderr, "pbs_rsub: %s\n", errs[0].Text)
			return 1
		case len(sts) == 1:
			v, _ := sts[0].Get(proto.AttrResvState)
			if st, ok := proto.ParseResvState(v); ok && st != proto.ResvUnconfirmed {
				resvcmd.PrintState(reply.ID, st)
				return 0
			}
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if sub.KeepUnconfirmed {
		fmt.Printf("%s UNCONFIRMED\n", reply.ID)
		return 0
	}
	if err := c.DeleteResv(reply.ID); err != nil {
		return env.Fail(err)
	}
	fmt.Printf("%s DELETED\n", reply.ID)
	return 1
}
