package qstat

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/proto"
)

// client is the part of proto.Client qstat uses.
type client interface {
	StatusJobs(*proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error)
	StatusQueues(*proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error)
	StatusServer(attrs []string) (proto.Status, error)
	ServerName() string
	Close() error
}

// deps are what run takes from the outside world.
type deps struct {
	connect func() (client, error)
	now     func() time.Time
	loc     *time.Location
}

// spec is the option letters of personality p. The pbspro set is
// OpenPBS's (without -W and the Tcl options); the torque set is
// Torque's, where -E takes a value. Options may follow operands because
// some tools call "qstat -f 123 -x".
func spec(p config.Personality) getopt.Spec {
	short := "aBD:EfF:GHiJMnpqQrstTu:wx1"
	if p == config.Torque {
		short = "aBcCeE:fGilMnqQrRstu:x1"
	}
	return getopt.Spec{Short: short, Long: []string{"version"}, Permute: true}
}

type mode int

const (
	jobsMode mode = iota
	queuesMode
	altQueuesMode
	serverMode
)

// request is a parsed command line.
type request struct {
	mode    mode
	version bool
	full    bool
	alt     bool
	xml     bool   // torque -x
	format  string // pbspro -F: "", "json" or "dsv"
	delim   string
	history bool
	opt     display.Options

	users      []string // -u
	states     string   // -i, -r, -H: the states to show
	arrays     bool     // -J
	subjobs    bool     // -t
	noComplete bool     // torque -c
}

// conflicts follows the option combinations OpenPBS's qstat refuses as
// "conflicting options" (its alt_opt bits and f_opt flag), fed in
// command line order because some of OpenPBS's rules depend on it.
type conflicts struct {
	kinds map[byte]bool // -a, -i, -r, -q, -H: at most one kind
	sizes map[byte]bool // -G, -M
	alt   bool          // an alternate-format option so far
	wide  bool          // -w so far
	full  bool          // OpenPBS's f_opt: -f, undone by a later -n or -s
	found bool          // -B or -Q came after such an option
}

// see records option o.
func (c *conflicts) see(o byte) {
	switch o {
	case 'a', 'i', 'r', 'q', 'H':
		c.kinds[o], c.alt = true, true
	case 'G', 'M':
		c.sizes[o], c.alt = true, true
	case 'n', 's':
		// OpenPBS drops -f's flag here: -f -n -F json is refused, as
		// the -F rule below finds no -f.
		c.full, c.alt = false, true
	case 'u', 'T':
		c.alt = true
	case '1':
		c.alt = true
	case 'w':
		c.wide, c.alt = true, true
	case 'f':
		c.full = true
	case 'B', 'Q':
		// -B and -Q after an alternate-format option that -w did not
		// come before (OpenPBS checks only what came before them).
		c.found = c.found || (c.alt && !c.wide)
	}
}

// refused applies the rules that need the whole command line; format is
// -F's value ("" for the default).
func (c *conflicts) refused(format string) bool {
	return c.found || len(c.kinds) > 1 || len(c.sizes) > 1 ||
		format != "" && !c.full || // -F only with -f: qstat -a -F json
		c.kinds['q'] && c.full
	// OpenPBS also refuses -1 without -n or -s (so qstat -1 and qstat
	// -f -1); it stays accepted here, since the workflow tools of the
	// client contract (integration/contract_test.go) pass "qstat -1" and
	// "qstat -f -1" to either personality.
}

// usageError is a command line qstat refuses; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// proUsage and torqueUsage list the options spec accepts in each
// personality, in the forms of the two programs' synopses.
const (
	proUsage = `usage:
qstat [-f [-1]] [-F json|dsv [-D delim]] [-w] [-x] [-E] [-J] [-t] [-p] [job_id | destination]...
qstat [-a|-i|-r|-H|-T] [-u user[,user]...] [-n] [-s] [-1] [-w] [-G|-M] [-x] [job_id | destination]...
qstat -Q [-f] [destination]...
qstat -q [-G|-M] [destination]...
qstat -B [-f] [server]...
qstat --version
`
	torqueUsage = `usage:
qstat [-c] [-C] [-f [-1]] [-x] [-t] [job_id | destination]...
qstat [-a|-i|-r|-e] [-c] [-n [-1]] [-s] [-G|-M] [-R] [-l] [-u user_list] [job_id | destination]...
qstat -Q [-f [-1]] [-c] [destination]...
qstat -q [-c] [-G|-M] [destination]...
qstat -B [-c] [-f [-1]] [server]...
qstat --version
`
)

// usage is the usage text of personality p.
func usage(p config.Personality) string {
	if p == config.Torque {
		return torqueUsage
	}
	return proUsage
}

// parse reads the command line for personality p.
func parse(p config.Personality, args []string) (*request, []string, error) {
	opts, operands, err := spec(p).Parse(args)
	if err != nil {
		return nil, nil, &usageError{err.Error()}
	}
	r := &request{mode: jobsMode, history: p == config.Torque}
	r.opt.Personality = p
	cf := conflicts{kinds: map[byte]bool{}, sizes: map[byte]bool{}}
	B, Q := false, false
	for _, o := range opts {
		cf.see(o.Name)
		switch o.Name {
		case 0:
			if o.Long == "version" {
				r.version = true
			}
		case 'a':
			r.alt = true
		case 'i':
			r.alt, r.states = true, "EHQTW"
		case 'r':
			r.alt, r.states = true, "RS"
		case 'H':
			r.alt, r.states, r.history = true, "FMX", true
		case 'T':
			r.alt, r.opt.EstStart = true, true
		case 'u':
			r.alt = true
			for _, u := range strings.Split(o.Value, ",") {
				if u = strings.TrimSpace(u); u != "" {
					r.users = append(r.users, u)
				}
			}
		case 'n':
			r.alt, r.opt.Nodes = true, true
		case 's':
			r.alt, r.opt.Comments = true, true
		case 'G', 'M':
			r.opt.Size = display.SizeGigabytes
			if o.Name == 'M' {
				r.opt.Size = display.SizeMegawords
			}
		case '1':
			r.opt.OneLine = true
		case 'p':
			r.opt.Percent = true
		case 'w':
			r.opt.Wide = true
		case 'f':
			r.full = true
		case 'F':
			switch f := strings.ToLower(o.Value); f {
			case "json", "dsv":
				r.format = f
			case "default":
				r.format = ""
			default:
				return nil, nil, &usageError{fmt.Sprintf("unknown output format %q", o.Value)}
			}
		case 'D':
			r.delim = o.Value
		case 'x':
			if p == config.Torque {
				r.xml = true
			}
			r.history = true
		case 'J':
			r.arrays = true
		case 't':
			r.subjobs = true
		case 'c':
			r.noComplete = true
		case 'q':
			r.mode = altQueuesMode
		case 'Q':
			r.mode, Q = queuesMode, true
		case 'B':
			r.mode, B = serverMode, true
		case 'E', 'e', 'C', 'l', 'R':
			// Accepted for the tools that pass them (-E sorts ids per
			// server, Torque's -e, -C, -l, -R select details): a single
			// server needs none of them.
		}
	}
	switch {
	case B && Q, p == config.Torque && (len(cf.kinds) > 1 || len(cf.sizes) > 1), p == config.PBSPro && cf.refused(r.format):
		return nil, nil, &usageError{"conflicting options."}
	case r.opt.Wide && r.format != "":
		return nil, nil, &usageError{"option w cannot be used with -F"}
	case r.format != "dsv" && r.delim != "":
		return nil, nil, &usageError{"-D needs -F dsv"}
	}
	if r.format != "" {
		r.full = true // -F only exists for the full listing
	}
	if p == config.PBSPro && r.opt.Wide && r.full {
		r.opt.OneLine = true // OpenPBS prints -f -w one attribute per line
	}
	r.opt.Delim = r.delim
	var ids []string
	for _, op := range operands {
		if op = cmdutil.NormalizeJobID(op); op != "" {
			ids = append(ids, op)
		}
	}
	return r, ids, nil
}

func runWith(env *cmdutil.Env, args []string, d deps) int {
	p := env.Personality()
	r, ids, err := parse(p, args)
	if err != nil {
		env.Errorf("%v", err)
		fmt.Fprint(env.Stderr, usage(p))
		return 2
	}
	if r.version {
		fmt.Fprintln(env.Stdout, display.Version(p))
		return 0
	}
	c, err := d.connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	r.opt.Now = d.now()
	r.opt.Loc = d.loc
	q := &qstat{env: env, c: c, r: r, ids: ids}
	switch r.mode {
	case queuesMode, altQueuesMode:
		return q.queues()
	case serverMode:
		return q.server()
	}
	return q.jobs()
}

// qstat is one call in progress.
type qstat struct {
	env *cmdutil.Env
	c   client
	r   *request
	ids []string
	rc  int
}

// nameServer sets the server name the output shows. It is called once
// the first request is answered: the connection learns the name with that
// answer (proto.Dial sends the request right behind its Hello), and
// asking before would cost a round trip of its own.
func (q *qstat) nameServer() {
	q.r.opt.ServerName = q.c.ServerName()
	if q.r.format == "json" && q.env.Config.Server != "" {
		q.r.opt.ServerName = q.env.Config.Server // OpenPBS's pbs_server is PBS_SERVER as configured
	}
}

// serverHeader fills the server name and comment that head the tables.
// It is cosmetic, so a failure leaves the name the connection reported.
func (q *qstat) serverHeader() {
	s, err := q.c.StatusServer(nil)
	if err != nil {
		return
	}
	if s.Name != "" {
		q.r.opt.ServerName = s.Name
	}
	q.r.opt.ServerComment, _ = s.Get(proto.AttrComment)
}

func (q *qstat) jobs() int {
	r := q.r
	jobs, objErrs, err := q.c.StatusJobs(&proto.StatusRequest{IDs: q.ids, History: r.history, Subjobs: r.subjobs, Attrs: r.jobAttrs()})
	if err != nil {
		// A server that rejects the whole request for a single operand
		// means that operand; anything else is a failure of the command.
		code := proto.CodeOf(err)
		if len(q.ids) != 1 || (code != proto.PBSE_UNKJOBID && code != proto.PBSE_HISTJOBID) {
			return q.env.Fail(err)
		}
		var pe *proto.Error
		errors.As(err, &pe)
		objErrs = []proto.ObjectError{{Name: q.ids[0], Code: code, Text: pe.Text}}
	}
	q.nameServer()
	jobs = q.filter(jobs)
	out := q.env.Stdout
	switch {
	case r.xml:
		err = q.xml(out, jobs)
	case r.format == "json":
		err = display.JobsJSON(out, jobs, r.opt)
	case r.format == "dsv":
		err = display.DSV(out, "Job Id: ", jobs, true, r.opt)
	case r.alt:
		if len(jobs) > 0 {
			q.serverHeader()
		}
		err = display.AltJobTable(out, jobs, r.opt)
	case r.full:
		err = display.FullJobs(out, jobs, r.opt)
	default:
		if len(jobs) > 0 && r.opt.Personality == config.PBSPro {
			q.serverHeader()
		}
		err = display.JobTable(out, jobs, r.opt)
	}
	if err != nil {
		q.env.Errorf("%v", err)
		return 1
	}
	q.reportErrors(objErrs)
	return q.rc
}

// xml prints Torque's -x documents: one for all jobs when no operand was
// given, otherwise one per job found.
func (q *qstat) xml(w io.Writer, jobs []proto.Status) error {
	if len(q.ids) == 0 {
		return display.JobsXML(w, jobs, q.r.opt)
	}
	for _, j := range jobs {
		if err := display.JobsXML(w, []proto.Status{j}, q.r.opt); err != nil {
			return err
		}
	}
	return nil
}

// filter applies the selections qstat makes itself: owners (-u), states
// (-i, -r, -H), array jobs (-J) and, in Torque, hiding completed jobs (-c).
// filterAttrs are the attributes filter reads.
var filterAttrs = []string{proto.AttrJobState, proto.AttrJobOwner, proto.AttrArray, proto.AttrArrayID}

// jobAttrs are the attributes to ask the server for: for the default
// table only those it shows and filter reads (a tenth of a job's, which
// matters over a long queue), else all (nil).
func (r *request) jobAttrs() []string {
	if r.xml || r.format != "" || r.alt || r.full {
		return nil
	}
	attrs := append(append([]string(nil), display.JobTableAttrs...), filterAttrs...)
	if r.opt.Percent {
		attrs = append(attrs, display.PercentAttrs...)
	}
	return attrs
}

func (q *qstat) filter(jobs []proto.Status) []proto.Status {
	r := q.r
	if len(r.users) == 0 && r.states == "" && !r.arrays && !r.noComplete {
		return jobs
	}
	var out []proto.Status
	for _, j := range jobs {
		state, _ := j.Get(proto.AttrJobState)
		state = display.StateLetter(r.opt.Personality, state)
		owner, _ := j.Get(proto.AttrJobOwner)
		switch {
		case r.states != "" && (state == "" || !strings.Contains(r.states, state)):
			continue
		case r.noComplete && state == "C":
			continue
		case r.arrays && !isTrue(j, proto.AttrArray) && !(r.subjobs && has(j, proto.AttrArrayID)):
			continue // -J: arrays, and with -t their subjobs
		case len(r.users) > 0 && !ownedBy(owner, r.users):
			continue
		}
		out = append(out, j)
	}
	return out
}

func has(j proto.Status, name string) bool {
	_, ok := j.Get(name)
	return ok
}

func isTrue(j proto.Status, name string) bool {
	v, _ := j.Get(name)
	return strings.EqualFold(v, "true")
}

// ownedBy matches a Job_Owner ("user@host") against -u entries, which are
// user names or user@host.
func ownedBy(owner string, users []string) bool {
	user, _, _ := strings.Cut(owner, "@")
	for _, u := range users {
		if u == owner || (!strings.Contains(u, "@") && u == user) {
			return true
		}
	}
	return false
}

// reportErrors prints one stderr line per failed operand and keeps the
// exit status of the last.
func (q *qstat) reportErrors(errs []proto.ObjectError) {
	p := q.r.opt.Personality
	for _, oe := range errs {
		id := cmdutil.FullJobID(oe.Name, q.c.ServerName())
		if p == config.PBSPro && oe.Code == proto.PBSE_HISTJOBID {
			fmt.Fprintf(q.env.Stderr, "%s: %s %s, use -x or -H to obtain historical job information\n",
				q.env.Name, id, cmdutil.ErrorText(p, oe.Code, oe.Text, oe.Name))
			q.rc = oe.Code.ExitStatus()
			continue
		}
		q.rc = q.env.JobError(cmdutil.JobError(p, &proto.Error{Code: oe.Code, Text: oe.Text}, oe.Name), id)
	}
}

// destinations turns -Q/-q operands into queue names: "queue@server" is
// the queue, and "@server" (the whole server) means every queue.
func destinations(ops []string) []string {
	var names []string
	for _, op := range ops {
		name, _, _ := strings.Cut(op, "@")
		if name == "" {
			return nil
		}
		names = append(names, name)
	}
	return names
}

func (q *qstat) queues() int {
	r := q.r
	queues, objErrs, err := q.c.StatusQueues(&proto.StatusRequest{IDs: destinations(q.ids)})
	if err != nil {
		return q.env.Fail(err)
	}
	q.nameServer()
	out := q.env.Stdout
	switch {
	case r.mode == altQueuesMode:
		q.serverHeader()
		err = display.AltQueueTable(out, queues, r.opt)
	case r.format == "json":
		err = display.QueuesJSON(out, queues, r.opt)
	case r.format == "dsv":
		err = display.DSV(out, "Queue: ", queues, false, r.opt)
	case r.full:
		err = display.FullQueues(out, queues, r.opt)
	default:
		err = display.QueueTable(out, queues, r.opt)
	}
	if err != nil {
		q.env.Errorf("%v", err)
		return 1
	}
	for _, oe := range objErrs {
		q.rc = q.env.JobError(cmdutil.JobError(r.opt.Personality, &proto.Error{Code: oe.Code, Text: oe.Text}, oe.Name), oe.Name)
	}
	return q.rc
}

func (q *qstat) server() int {
	r := q.r
	s, err := q.c.StatusServer(nil)
	if err != nil {
		return q.env.Fail(err)
	}
	q.nameServer()
	servers := []proto.Status{s}
	out := q.env.Stdout
	switch {
	case r.format == "json":
		err = display.ServersJSON(out, servers, r.opt)
	case r.format == "dsv":
		err = display.DSV(out, "Server: ", servers, false, r.opt)
	case r.full:
		err = display.FullServers(out, servers, r.opt)
	default:
		err = display.ServerTable(out, servers, r.opt)
	}
	if err != nil {
		q.env.Errorf("%v", err)
		return 1
	}
	return 0
}
