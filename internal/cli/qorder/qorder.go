package qorder

import (
	"fmt"
	"strings"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/display"
)

// client is the part of proto.Client qorder uses.
type client interface {
	OrderJob(id1, id2 string) error
	ServerName() string
	Close() error
}

// usage is OpenPBS's qorder usage.
const usage = "usage: qorder job_identifier job_identifier\n       qorder --version\n"

// run is qorder with args, connecting through connect.
func run(env *cmdutil.Env, args []string, connect func() (client, error)) int {
	if cmdutil.Help(args, false) {
		return env.PrintHelp(usage)
	}
	if len(args) == 1 && args[0] == "--version" {
		fmt.Fprintln(env.Stdout, display.Version(env.Personality()))
		return 0
	}
	if len(args) != 2 || strings.HasPrefix(args[0], "-") || strings.HasPrefix(args[1], "-") {
		// qorder has no options: a job id never begins with '-'.
		fmt.Fprint(env.Stderr, usage)
		return 2
	}
	id1, id2 := cmdutil.NormalizeJobID(args[0]), cmdutil.NormalizeJobID(args[1])
	for _, id := range []string{id1, id2} {
		if !wellFormed(id) {
			env.Errorf("illegally formed job identifier: %s", id)
			return 1
		}
	}
	if !sameServer(serverOf(id1, env.Config.Server), serverOf(id2, env.Config.Server)) {
		env.Errorf("both jobs ids must specify the same server")
		return 1
	}
	c, err := connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	if err := c.OrderJob(id1, id2); err != nil {
		server := c.ServerName()
		both := cmdutil.FullJobID(id1, server) + " or " + cmdutil.FullJobID(id2, server)
		return env.JobError(cmdutil.JobError(env.Personality(), err, ""), both)
	}
	return 0
}

// wellFormed is OpenPBS's test of a job id's shape: a sequence number
// (digits, an array's [] or [index] after them) first.
func wellFormed(id string) bool {
	return id != "" && id[0] >= '0' && id[0] <= '9' && !strings.ContainsAny(id, " \t\n")
}

// serverOf is the server an id names: after '@', else after the
// sequence number's '.', else the default (def).
func serverOf(id, def string) string {
	if _, s, ok := strings.Cut(id, "@"); ok {
		return s
	}
	if _, s, ok := strings.Cut(id, "."); ok && s != "" {
		return s
	}
	return def
}

// sameServer compares server names as OpenPBS compares the hosts it
// resolves them to, without a resolver: case aside, a short name is
// the same server as a full name that begins with it.
func sameServer(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if a == b || a == "" || b == "" {
		return true
	}
	short := func(s string) string { h, _, _ := strings.Cut(s, "."); return h }
	return (a == short(b) || short(a) == b)
}
