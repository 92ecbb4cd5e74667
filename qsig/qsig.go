package main

import (
	"fmt"
	"strings"

	"gopbs/internal/cmdutil"
	"gopbs/internal/display"
	"gopbs/internal/getopt"
)

// client is the part of proto.Client qsig uses.
type client interface {
	SignalJob(id, sig string) error
	ServerName() string
	Close() error
}

const usageText = "usage: qsig [-s signal] [-a] job_id...\n"

// defaultSignal is what qsig sends without -s.
const defaultSignal = "SIGTERM"

// parse returns the signal and job ids, or a usage error.
func parse(args []string) (sig string, ids []string, err error) {
	opts, operands, err := getopt.Spec{Short: "s:a", Permute: true}.Parse(args)
	if err != nil {
		return "", nil, err
	}
	sig = defaultSignal
	for _, o := range opts {
		if o.Name == 's' {
			if sig = strings.TrimSpace(o.Value); sig == "" {
				return "", nil, fmt.Errorf("illegal -s value: %q", o.Value)
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
	return sig, ids, nil
}

func runWith(env *cmdutil.Env, args []string, connect func() (client, error)) int {
	sig, ids, err := parse(args)
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
		if err := c.SignalJob(id, sig); err != nil {
			rc = env.JobError(display.JobError(env.Personality(), err, id), display.FullJobID(id, c.ServerName()))
		}
	}
	return rc
}
