// Package pbsreleasenodes is pbs_release_nodes's logic; cmd/pbs_release_nodes documents the command.
package pbsreleasenodes

import (
	"fmt"
	"os"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/proto"
)

const usage = "usage: pbs_release_nodes [-j job_id] node [node...]\n       pbs_release_nodes [-j job_id] -a"

// Main is pbs_release_nodes's whole main (cmd/pbs_release_nodes calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if cmdutil.Help(args, false) {
		fmt.Println(usage)
		return 0
	}
	opts, nodes, err := getopt.Spec{Short: "j:a"}.Parse(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_release_nodes: %v\n%s\n", err, usage)
		return 2
	}
	req := &proto.ResizeRequest{JobID: os.Getenv("PBS_JOBID"), Release: nodes, Immediate: true, GiveBack: true}
	for _, o := range opts {
		switch o.Name {
		case 'j':
			req.JobID = cmdutil.NormalizeJobID(o.Value)
		case 'a':
			req.All = true
		}
	}
	switch {
	case req.All && len(nodes) > 0:
		fmt.Fprintf(os.Stderr, "pbs_release_nodes: -a and node names exclude each other\n%s\n", usage)
		return 2
	case !req.All && len(nodes) == 0:
		fmt.Fprintf(os.Stderr, "pbs_release_nodes: no node to give back\n%s\n", usage)
		return 2
	case req.JobID == "":
		fmt.Fprintf(os.Stderr, "pbs_release_nodes: no job: give -j job_id (PBS_JOBID is not set)\n")
		return 2
	}
	env := cmdutil.NewEnv("pbs_release_nodes")
	c, err := env.Connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	req.JobID = cmdutil.FullJobID(req.JobID, c.ServerName())
	if err := c.ResizeJob(req); err != nil {
		return env.FailJob(err, req.JobID, c.ServerName())
	}
	return 0
}
