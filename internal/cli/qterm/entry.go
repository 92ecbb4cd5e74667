package qterm

import (
	"fmt"
	"os"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/proto"
)

const usage = "usage: qterm [-m] [-s] [-t immediate|delay|quick] [server]\n"

// client is what qterm needs from the server connection.
type client interface {
	Shutdown(req *proto.ShutdownRequest) error
	Close() error
}

// Main is qterm's whole main (cmd/qterm calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	env := cmdutil.NewEnv("qterm")
	os.Exit(run(env, os.Args[1:], cmdutil.Connector[client](env)))
}

func run(env *cmdutil.Env, args []string, connect func() (client, error)) int {
	if cmdutil.Help(args, false) {
		return env.PrintHelp(usage)
	}
	req, err := parse(args, env.Config)
	if err != nil {
		env.Errorf("%v", err)
		fmt.Fprint(env.Stderr, usage)
		return 2
	}
	c, err := connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	if err := c.Shutdown(req); err != nil {
		return env.Fail(err)
	}
	return 0
}

// manners maps -t values to shutdown manners.
var manners = map[string]proto.ShutdownManner{
	"immediate": proto.ShutImmediate,
	"delay":     proto.ShutDelay,
	"quick":     proto.ShutQuick,
}

// parse turns qterm's arguments into a request.
func parse(args []string, cfg *config.Config) (*proto.ShutdownRequest, error) {
	opts, operands, err := getopt.Spec{Short: "fFimst:"}.Parse(args)
	if err != nil {
		return nil, err
	}
	req := &proto.ShutdownRequest{Manner: proto.ShutQuick}
	for _, o := range opts {
		switch o.Name {
		case 'm':
			req.Moms = true
		case 's':
			req.Scheduler = true
		case 't':
			m, ok := manners[o.Value]
			if !ok {
				return nil, fmt.Errorf("illegal -t value: %q (immediate, delay or quick)", o.Value)
			}
			req.Manner = m
		case 'f', 'F', 'i':
			return nil, fmt.Errorf("-%c: there is no failover server", o.Name)
		}
	}
	switch len(operands) {
	case 0:
	case 1:
		name := operands[0]
		if name != cfg.Server && config.ShortName(name) != cfg.ServerName() {
			return nil, fmt.Errorf("%s is not the configured server (%s)", name, cfg.Server)
		}
	default:
		return nil, fmt.Errorf("only one server may be named")
	}
	return req, nil
}
