package qsub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/internal/qsubopt"
	"github.com/gopbs/gopbs/internal/x11"
	"github.com/gopbs/gopbs/proto"
)

// submitter is the part of *proto.Client that qsub uses.
type submitter interface {
	Submit(req *proto.SubmitRequest) (string, error)
	StatusJobs(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error)
	DeleteJob(id string, opts proto.DeleteOptions) error
	WhoAmI() (proto.WhoAmIReply, error)
	StatusServer(attrs []string) (proto.Status, error)
	Close() error
}

// system is what run takes from the process, so that tests can run it
// without a server.
type system struct {
	ctx     qsubopt.Context
	connect func() (submitter, error)
	clock   clock
	// lookupIP resolves the host name qsub -I listens on.
	lookupIP lookupIP
}

// Main is qsub's whole main (cmd/qsub calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	env := cmdutil.NewEnv("qsub")
	os.Exit(run(env, os.Args[1:], processSystem(env)))
}

func processSystem(env *cmdutil.Env) system {
	return system{ctx: qsubopt.ProcessContext(), connect: cmdutil.Connector[submitter](env), clock: clock{now: time.Now, sleep: time.Sleep},
		lookupIP: func(ctx context.Context, host string) ([]net.IP, error) {
			return net.DefaultResolver.LookupIP(ctx, "ip", host)
		}}
}

func run(env *cmdutil.Env, args []string, sys system) int {
	if cmdutil.Help(args, true) {
		return env.PrintHelp(qsubopt.SubmitUsage + "\n")
	}
	sub, err := qsubopt.ParseSubmit(args, sys.ctx)
	if err != nil {
		var ue *qsubopt.UsageError
		if errors.As(err, &ue) {
			env.Errorf("%s", ue.Msg)
			fmt.Fprintln(env.Stderr, qsubopt.SubmitUsage)
			return 2
		}
		return env.Fail(err)
	}
	if sub.Version {
		fmt.Fprintln(env.Stdout, display.Version(env.Personality()))
		return 0
	}
	client, err := connectWithin(sys.connect, sub.ConnectWait, sys.clock)
	if err != nil {
		env.Errorf("%s", err)
		if proto.CodeOf(err) == proto.PBSE_NOSERVER {
			return proto.PBSE_SYSTEM.ExitStatus()
		}
		return cmdutil.ExitStatus(err)
	}
	if err := applyServerDefaults(client, sub, sys.ctx); err != nil {
		client.Close()
		return env.Fail(err)
	}
	if sub.Interactive {
		var x *x11.Display
		if sub.X11 {
			x = &sub.Display
		}
		return runInteractive(env, sub.Request, x, client, sys)
	}
	defer func() { client.Close() }()
	id, err := client.Submit(sub.Request)
	if err != nil {
		return env.Fail(err)
	}
	if id == "" {
		return env.Fail(proto.Errorf(proto.PBSE_PROTOCOL, "the server returned no job id"))
	}
	if !sub.Quiet {
		fmt.Fprintln(env.Stdout, id)
	}
	if !sub.Block {
		return 0
	}
	status, c, err := waitJob(id, client, sys.connect, sys.clock)
	client = c
	if err != nil {
		return env.Fail(err)
	}
	// As OpenPBS's qsub: the job's exit status is qsub's (the system
	// keeps its low 8 bits).
	return status
}

// connectWithin connects to the server, trying again once a second for
// up to wait (Torque's qsub -b) while the server cannot be reached. Only
// the connection is retried: a submission that failed may have been
// taken, and is never sent twice.
func connectWithin(connect func() (submitter, error), wait time.Duration, clk clock) (submitter, error) {
	deadline := clk.now().Add(wait)
	for {
		c, err := connect()
		if err == nil || wait <= 0 || !unreachable(err) {
			return c, err
		}
		left := deadline.Sub(clk.now())
		if left <= 0 {
			return c, err
		}
		clk.sleep(min(left, time.Second))
	}
}

// unreachable reports whether a connection failed for want of a server
// to answer (down, restarting, not yet started).
func unreachable(err error) bool {
	switch proto.CodeOf(err) {
	case proto.PBSE_NOSERVER, proto.PBSE_PROTOCOL:
		return true
	}
	return false
}

// applyServerDefaults gives the request the server's
// default_qsub_arguments, below what the command line and the script
// said (OpenPBS's rule). A server that cannot answer (no quorum in a
// group) is reported as it is: the submission would meet the same.
func applyServerDefaults(client submitter, sub *qsubopt.Submission, ctx qsubopt.Context) error {
	st, err := client.StatusServer([]string{proto.AttrDefaultQsubArguments})
	if err != nil {
		return err
	}
	for _, a := range st.Attrs {
		if a.Name != proto.AttrDefaultQsubArguments || a.Value == "" {
			continue
		}
		attrs, err := qsubopt.ParseDefaults(a.Value, ctx)
		if err != nil {
			return proto.Errorf(proto.PBSE_BADATVAL, "(the server's %v)", err)
		}
		qsubopt.ApplyDefaults(sub.Request, attrs)
	}
	return nil
}
