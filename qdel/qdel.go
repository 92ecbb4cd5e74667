package main

import (
	"fmt"
	"strings"

	"gopbs/internal/cmdutil"
	"gopbs/internal/display"
	"gopbs/internal/getopt"
)

// client is the part of proto.Client qdel uses.
type client interface {
	DeleteJob(id string, force bool) error
	ServerName() string
	Close() error
}

const usageText = "usage: qdel [-W force|delay|suppress_email=N] [-x] [-p] job_id...\n"

// parse returns whether to force and the job ids, or a usage error.
func parse(args []string) (force bool, ids []string, err error) {
	opts, operands, err := getopt.Spec{Short: "W:xp", Permute: true}.Parse(args)
	if err != nil {
		return false, nil, err
	}
	for _, o := range opts {
		switch o.Name {
		case 'W':
			switch v := strings.TrimSpace(o.Value); {
			case strings.EqualFold(v, "force"):
				force = true
			case isDigits(v), strings.HasPrefix(v, "suppress_email="):
				// The server's kill delay and mail settings apply.
			default:
				return false, nil, fmt.Errorf("illegal -W value: %s", o.Value)
			}
		case 'p':
			force = true
		}
	}
	for _, op := range operands {
		if id := cmdutil.NormalizeJobID(op); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return false, nil, fmt.Errorf("no job id given")
	}
	return force, ids, nil
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func runWith(env *cmdutil.Env, args []string, connect func() (client, error)) int {
	force, ids, err := parse(args)
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
		if err := c.DeleteJob(id, force); err != nil {
			rc = env.JobError(display.JobError(env.Personality(), err, id), display.FullJobID(id, c.ServerName()))
		}
	}
	return rc
}
