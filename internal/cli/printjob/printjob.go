package printjob

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/proto"
)

// client is the part of proto.Client printjob uses.
type client interface {
	StatusJobs(*proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error)
	ServerName() string
	Close() error
}

// deps are what run takes from the outside world.
type deps struct {
	connect func() (client, error)
	uid     func() int
}

// usage is OpenPBS's printjob usage without the forms this one lacks
// (a job file, -s).
const usage = "Usage: printjob [-a] jobid...\n       printjob --version\n"

const rule = "---------------------------------------------------\n"

// stateNumbers are OpenPBS's job state numbers (JOB_STATE_*), by the
// letter qstat shows; a suspended job is running to OpenPBS.
var stateNumbers = map[string]int{
	"T": 0, "Q": 1, "H": 2, "W": 3, "R": 4, "S": 4, "U": 4, "E": 5, "X": 6, "B": 7, "M": 8, "F": 9,
}

func run(env *cmdutil.Env, args []string, d deps) int {
	if cmdutil.Help(args, false) {
		return env.PrintHelp(usage)
	}
	if len(args) == 1 && args[0] == "--version" {
		fmt.Fprintln(env.Stdout, display.Version(env.Personality()))
		return 0
	}
	if d.uid() != 0 {
		fmt.Fprintln(env.Stderr, "printjob must be run by root")
		return 1
	}
	opts, ids, err := getopt.Spec{Short: "as", Permute: true}.Parse(args)
	if err != nil {
		env.Errorf("%v", err)
		fmt.Fprint(env.Stderr, usage)
		return 1
	}
	noAttrs := false
	for _, o := range opts {
		switch o.Name {
		case 'a':
			noAttrs = true
		case 's':
			env.Errorf("-s: the job script is kept in the server's store, and no request returns it")
			return 1
		}
	}
	if len(ids) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return 1
	}
	c, err := d.connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	for _, raw := range ids {
		id := cmdutil.NormalizeJobID(raw)
		jobs, _, err := c.StatusJobs(&proto.StatusRequest{IDs: []string{id}, History: true})
		if err != nil && proto.CodeOf(err) != proto.PBSE_UNKJOBID {
			return env.Fail(err)
		}
		if len(jobs) == 0 {
			// OpenPBS's words; it completes a bare number with the
			// server's name.
			if !strings.Contains(id, ".") {
				id += "." + c.ServerName()
			}
			fmt.Fprintf(env.Stderr, "Job %s not found\n", id)
			return 1
		}
		for _, j := range jobs {
			if err := write(env.Stdout, j, noAttrs); err != nil {
				env.Errorf("%v", err)
				return 1
			}
		}
	}
	return 0
}

// write prints one job's record as OpenPBS's printjob lays it out: the
// header of the fields this record has, the attributes unless noAttrs,
// then a blank line.
func write(w io.Writer, j proto.Status, noAttrs bool) error {
	var b strings.Builder
	plain := func(name string) string {
		v, _ := j.Get(name)
		return v
	}
	b.WriteString(rule)
	fmt.Fprintf(&b, "jobid:\t%s\n", j.Name)
	b.WriteString(rule)
	if n, ok := stateNumbers[plain(proto.AttrJobState)]; ok {
		fmt.Fprintf(&b, "state:\t\t0x%x\n", n)
	}
	if sub, err := strconv.Atoi(plain(proto.AttrSubstate)); err == nil {
		fmt.Fprintf(&b, "substate:\t0x%x (%d)\n", sub, sub)
	}
	stime := plain(proto.AttrStime)
	if stime == "" {
		stime = "0" // OpenPBS prints its unset ji_stime
	}
	fmt.Fprintf(&b, "stime:\t\t%s\n", stime)
	fmt.Fprintf(&b, "queue:\t\t%s\n", plain(proto.AttrQueue))
	if !noAttrs {
		b.WriteString("--attributes--\n")
		for _, a := range j.Attrs {
			b.WriteString(a.Name)
			if a.Resource != "" {
				b.WriteString("." + a.Resource)
			}
			b.WriteString(" = " + a.Value + "\n")
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
