package main

import (
	"fmt"
	"strings"

	"gopbs/internal/cmdutil"
	"gopbs/internal/display"
	"gopbs/internal/getopt"
)

// client is the part of proto.Client qrls uses.
type client interface {
	ReleaseJob(id, types string) error
	ServerName() string
	Close() error
}

const usageText = "usage: qrls [-h hold_list] job_id...\n"

// parse returns the hold types and job ids, or a usage error.
func parse(args []string) (types string, ids []string, err error) {
	opts, operands, err := getopt.Spec{Short: "h:", Permute: true}.Parse(args)
	if err != nil {
		return "", nil, err
	}
	types = "u"
	for _, o := range opts {
		if o.Name == 'h' {
			types = strings.TrimSpace(o.Value)
			if types == "" || strings.Trim(types, "uosp") != "" {
				return "", nil, fmt.Errorf("illegal -h value: %s", o.Value)
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
	return types, ids, nil
}

func runWith(env *cmdutil.Env, args []string, connect func() (client, error)) int {
	types, ids, err := parse(args)
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
		if err := c.ReleaseJob(id, types); err != nil {
			rc = env.JobError(display.JobError(env.Personality(), err, id), display.FullJobID(id, c.ServerName()))
		}
	}
	return rc
}
