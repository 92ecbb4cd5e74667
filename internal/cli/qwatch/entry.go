// Package qwatch is qwatch's logic; cmd/qwatch documents the command.
package qwatch

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/proto"
)

// Main is qwatch's whole main (cmd/qwatch calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(cmdutil.NewEnv("qwatch"), os.Args[1:])) }

const usageText = `usage: qwatch [-u user] [-q queue] [-a seq] [-n count] [job_id...]
Prints each change of a job's state as the server commits it, one line per
change: "<seq> <time> <job id> <state> <substate> <exit status|-> <queue> <owner>"
(seq numbers the server's changes; time is RFC 3339 with milliseconds).
  job_id...  only these jobs (an array: its subjobs too)
  -u user    only this user's jobs
  -q queue   only this queue's jobs
  -a seq     first every change after seq the server still keeps (a resume);
             refused when some are no longer kept
  -n count   exit 0 after count changes
Without -a it starts with the changes from now on. A user who is not a
manager or operator sees only their own jobs when query_other_jobs is
false. The stream's end is an error, with its PBS error's exit status as
every command: 29 when cut off for reading too slowly, 212 when the server
shuts down, 28 when a resume (-a) is refused.
`

func run(env *cmdutil.Env, args []string) int {
	if cmdutil.Help(args, false) {
		return env.PrintHelp(usageText)
	}
	req, count, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(env.Stderr, "qwatch: %v\n%s", err, usageText)
		return 2
	}
	c, err := env.Connect()
	if err != nil {
		return env.Fail(err)
	}
	st, err := c.Subscribe(req)
	if err != nil {
		c.Close()
		return env.Fail(err)
	}
	defer st.Close()
	printed := 0
	for {
		evs, err := st.Next()
		if err != nil {
			return env.Fail(err)
		}
		for _, e := range evs {
			fmt.Fprintln(env.Stdout, line(&e))
			if printed++; count > 0 && printed >= count {
				return 0
			}
		}
	}
}

// parseArgs reads the command line into a subscription and -n.
func parseArgs(args []string) (*proto.SubscribeRequest, int, error) {
	opts, operands, err := getopt.Spec{Short: "u:q:a:n:"}.Parse(args)
	if err != nil {
		return nil, 0, err
	}
	req := &proto.SubscribeRequest{}
	count := 0
	for _, o := range opts {
		switch o.Name {
		case 'u':
			req.Owner = o.Value
		case 'q':
			req.Queue = o.Value
		case 'a':
			n, err := strconv.ParseUint(o.Value, 10, 64)
			if err != nil {
				return nil, 0, fmt.Errorf("bad sequence number %q", o.Value)
			}
			req.Resume, req.After = true, n
		case 'n':
			n, err := strconv.Atoi(o.Value)
			if err != nil || n <= 0 {
				return nil, 0, fmt.Errorf("bad count %q", o.Value)
			}
			count = n
		}
	}
	for _, id := range operands {
		req.JobIDs = append(req.JobIDs, cmdutil.NormalizeJobID(id))
	}
	return req, count, nil
}

// line is one change as qwatch prints it.
func line(e *proto.JobEvent) string {
	exit := "-"
	if e.ExitStatus != nil {
		exit = strconv.Itoa(*e.ExitStatus)
	}
	when := time.UnixMilli(e.Time).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	return fmt.Sprintf("%d %s %s %s %s %s %s %s", e.Seq, when, e.JobID, e.State, e.Substate, exit, e.Queue, e.Owner)
}
