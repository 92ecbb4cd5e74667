package qwait

import (
	"fmt"
	"os"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Main is qwait's whole main (cmd/qwait calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() { os.Exit(run(cmdutil.NewEnv("qwait"), os.Args[1:])) }

const usageText = `usage: qwait [-x] [-t timeout] job_id...
Waits until every job named has ended (for an array, every subjob), on the
server's event stream: no polling.
  -x          a job already finished (in the history) is reported at once;
              without -x it is an error, as for qstat ("Job has finished")
  -t timeout  give up after timeout: seconds, or [[hh:]mm:]ss; -t 0 reads
              the jobs' state once and returns
Output: one line per end, as it happens: "<job id> <exit status> <state>",
  the state F for a job, X for a subjob (as qstat -x shows them). On a
  timeout, one line per job not ended: "<job id> - <state now>".
Exit status:
  0    every job ended with exit status 0
  N    the first non-zero exit status printed, as the shell sees it (its
       low 8 bits: a job killed by signal S, exit status 256+S, gives S;
       a job that could not run, exit status -1, gives 255); 1 when those
       bits are 0
  124  the timeout passed before every job ended
  2    a usage error
  a job that cannot be waited for (unknown, not yours to see, finished
  without -x) is an error on stderr, "qwait: <message> <job id>", and qwait
  exits at once with its PBS error's status (153, 35 ...), as qstat does.
Across a restart of the server qwait reconnects and resumes where it was;
when the server no longer has the changes it missed, it reads the jobs'
state again.
`

// options are qwait's command line.
type options struct {
	history bool
	timeout time.Duration
	limited bool // -t given
	ids     []string
}

// parseArgs reads the command line; a usage error is a *getopt.Error or
// an error saying what is wrong.
func parseArgs(args []string) (options, error) {
	var o options
	opts, operands, err := getopt.Spec{Short: "xt:"}.Parse(args)
	if err != nil {
		return o, err
	}
	for _, opt := range opts {
		switch opt.Name {
		case 'x':
			o.history = true
		case 't':
			secs, err := resc.ParseDuration(opt.Value)
			if err != nil {
				return o, fmt.Errorf("bad timeout %q: %w", opt.Value, err)
			}
			o.timeout, o.limited = time.Duration(secs)*time.Second, true
		}
	}
	if len(operands) == 0 {
		return o, fmt.Errorf("no job id")
	}
	for _, id := range operands {
		o.ids = append(o.ids, cmdutil.NormalizeJobID(id))
	}
	return o, nil
}

func run(env *cmdutil.Env, args []string) int {
	if cmdutil.Help(args, false) {
		return env.PrintHelp(usageText)
	}
	o, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(env.Stderr, "qwait: %v\n%s", err, usageText)
		return exitUsage
	}
	w := &waiter{env: env, opts: o, connect: func() (*proto.Client, error) { return env.Connect() }, now: time.Now}
	return w.run()
}
