package main

import (
	"fmt"
	"strings"

	"gopbs/internal/cmdutil"
	"gopbs/internal/display"
	"gopbs/internal/getopt"
)

// client is the part of proto.Client qrun uses.
type client interface {
	RunJob(id, nodes string) error
	ServerName() string
	Close() error
}

const usageText = "usage: qrun [-H node[+node...]] [-a] job_id...\n"

// parse returns the node list ("" for the server's choice) and job ids, or
// a usage error.
func parse(args []string) (nodes string, ids []string, err error) {
	opts, operands, err := getopt.Spec{Short: "H:a", Permute: true}.Parse(args)
	if err != nil {
		return "", nil, err
	}
	for _, o := range opts {
		if o.Name == 'H' {
			if nodes = strings.TrimSpace(o.Value); nodes == "" {
				return "", nil, fmt.Errorf("illegal -H value: %q", o.Value)
			}
		}
	}
	for _, op := range operands {
		if id := cmdutil.NormalizeJobID(op); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", nil, fmt.Errorf("no job id given")
	}
	return nodes, ids, nil
}

func runWith(env *cmdutil.Env, args []string, connect func() (client, error)) int {
	nodes, ids, err := parse(args)
	if err != nil {
		env.Errorf("%v", err)
		fmt.Fprint(env.Stderr, usageText)
		return 2
	}
	c, err := connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	rc := 0
	for _, id := range ids {
		if err := c.RunJob(id, nodes); err != nil {
			rc = env.JobError(display.JobError(env.Personality(), err, id), display.FullJobID(id, c.ServerName()))
		}
	}
	return rc
}
