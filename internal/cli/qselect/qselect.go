package qselect

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/proto"
)

// client is the part of proto.Client qselect uses.
type client interface {
	SelectJobs(req *proto.SelectRequest) ([]string, error)
	Close() error
}

// deps are what run takes from the outside world.
type deps struct {
	connect func() (client, error)
	now     func() time.Time
	loc     *time.Location
}

const usageText = `usage: qselect [-a [op]date_time] [-A account] [-c [op]interval] [-h hold_list]
	[-H] [-J] [-l resource.op.value[,...]] [-N name] [-p [op]priority] [-P project]
	[-q destination] [-r y|n] [-s [op]states] [-t subopt[op]date_time] [-T]
	[-u user_list] [-x]
`

// opNamed maps a two-letter operator name to its wire operator.
func opNamed(name string) (proto.Op, bool) {
	switch name {
	case "eq":
		return proto.OpEQ, true
	case "ne":
		return proto.OpNE, true
	case "ge":
		return proto.OpGE, true
	case "gt":
		return proto.OpGT, true
	case "le":
		return proto.OpLE, true
	case "lt":
		return proto.OpLT, true
	}
	return 0, false
}

// leadingOp splits an optional ".op." prefix off a value; equality is the
// default.
func leadingOp(v string) (proto.Op, string, error) {
	if !strings.HasPrefix(v, ".") {
		return proto.OpEQ, v, nil
	}
	if len(v) < 4 || v[3] != '.' {
		return 0, "", fmt.Errorf("bad operator in %q", v)
	}
	op, ok := opNamed(v[1:3])
	if !ok {
		return 0, "", fmt.Errorf("bad operator in %q", v)
	}
	return op, v[4:], nil
}

// resourceList reads -l "ncpus.gt.4,mem.le.1gb" into criteria. Each item
// needs its operator, as in OpenPBS.
func resourceList(v string) ([]proto.Attr, error) {
	var out []proto.Attr
	for _, item := range strings.Split(v, ",") {
		res, rest, ok := strings.Cut(item, ".")
		if !ok || res == "" || len(rest) < 4 || rest[2] != '.' {
			return nil, fmt.Errorf("illegal -l value: %s", v)
		}
		op, ok := opNamed(rest[:2])
		if !ok || rest[3:] == "" {
			return nil, fmt.Errorf("illegal -l value: %s", v)
		}
		out = append(out, proto.Attr{Name: proto.AttrResourceList, Resource: res, Value: rest[3:], Op: op})
	}
	return out, nil
}

// timeAttr is the attribute a -t sub-option letter compares.
func timeAttr(c byte) (name, res string, ok bool) {
	switch c {
	case 'a':
		return proto.AttrExecutionTime, "", true
	case 'c':
		return proto.AttrCtime, "", true
	case 'e':
		return proto.AttrEtime, "", true
	case 'g':
		return proto.AttrEligibleTime, "", true
	case 'm':
		return proto.AttrMtime, "", true
	case 'q':
		return proto.AttrQtime, "", true
	case 's':
		return proto.AttrStime, "", true
	case 't':
		return "estimated", "start_time", true
	}
	return "", "", false
}

// parseDateTime reads [[[[CC]YY]MM]DD]hhmm[.SS] in loc. Fields left out
// are taken from now, and a result already past moves forward by the
// smallest field left out (day, month or year), as PBS's cvtdate does.
func parseDateTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	bad := fmt.Errorf("bad date and time %q", s)
	main, secs, hasSecs := strings.Cut(s, ".")
	if !isDigits(main) || (hasSecs && (len(secs) != 2 || !isDigits(secs))) {
		return time.Time{}, bad
	}
	now = now.In(loc)
	year, month, day := now.Date()
	sec := 0
	if hasSecs {
		sec, _ = strconv.Atoi(secs)
	}
	num := func(i int) int { n, _ := strconv.Atoi(main[i : i+2]); return n }
	n := len(main)
	if n < 4 || n > 12 || n%2 != 0 {
		return time.Time{}, bad
	}
	hour, minute := num(n-4), num(n-2)
	roll := 0 // 1 day, 2 month, 3 year, 0 none
	switch n {
	case 4:
		roll = 1
	case 6:
		day, roll = num(0), 2
	case 8:
		month, day, roll = time.Month(num(0)), num(2), 3
	case 10:
		year, month, day = 1900+num(0), time.Month(num(2)), num(4)
		if year < 1969 {
			year += 100 // POSIX: 69-99 are 19xx, 00-68 20xx
		}
	case 12:
		year, month, day = num(0)*100+num(2), time.Month(num(4)), num(6)
	}
	if hour > 23 || minute > 59 || sec > 60 || month < 1 || month > 12 || day < 1 || day > 31 {
		return time.Time{}, bad
	}
	t := time.Date(year, month, day, hour, minute, sec, 0, loc)
	if t.Day() != day {
		return time.Time{}, bad // no such day in that month
	}
	if t.Before(now) {
		switch roll {
		case 1:
			t = t.AddDate(0, 0, 1)
		case 2:
			t = time.Date(year, month+1, day, hour, minute, sec, 0, loc)
		case 3:
			t = time.Date(year+1, month, day, hour, minute, sec, 0, loc)
		}
	}
	return t, nil
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// parse turns the command line into the select request.
func parse(p config.Personality, args []string, now time.Time, loc *time.Location) (req *proto.SelectRequest, server string, err error) {
	opts, operands, err := getopt.Spec{Short: "a:A:c:h:HJl:N:p:P:q:r:s:t:Tu:x"}.Parse(args)
	if err != nil {
		return nil, "", err
	}
	if len(operands) > 0 {
		return nil, "", fmt.Errorf("unexpected operand %q", operands[0])
	}
	req = &proto.SelectRequest{History: p == config.Torque}
	var crit []proto.Attr
	add := func(name, res, value string, op proto.Op) {
		crit = append(crit, proto.Attr{Name: name, Resource: res, Value: value, Op: op})
	}
	for _, o := range opts {
		v := o.Value
		switch o.Name {
		case 'a', 't':
			name, res := proto.AttrExecutionTime, ""
			if o.Name == 't' {
				var ok bool
				if v == "" {
					return nil, "", fmt.Errorf("illegal -t value: %q", v)
				}
				if name, res, ok = timeAttr(v[0]); !ok {
					return nil, "", fmt.Errorf("illegal -t value: %q", v)
				}
				v = v[1:]
			}
			op, rest, err := leadingOp(v)
			if err != nil {
				return nil, "", fmt.Errorf("illegal -%c value: %v", o.Name, err)
			}
			when, err := parseDateTime(rest, now, loc)
			if err != nil {
				return nil, "", fmt.Errorf("illegal -%c value: %v", o.Name, err)
			}
			add(name, res, strconv.FormatInt(when.Unix(), 10), op)
		case 'c', 'h', 'p', 's':
			op, rest, err := leadingOp(v)
			if err == nil && strings.TrimSpace(rest) == "" {
				err = fmt.Errorf("empty value")
			}
			if err != nil {
				return nil, "", fmt.Errorf("illegal -%c value: %v", o.Name, err)
			}
			name := map[byte]string{'c': proto.AttrCheckpoint, 'h': proto.AttrHoldTypes, 'p': proto.AttrPriority, 's': proto.AttrJobState}[o.Name]
			if o.Name == 's' && p == config.Torque {
				rest = strings.ReplaceAll(rest, "C", "F") // Torque's completed is the server's finished
			}
			add(name, "", strings.TrimSpace(rest), op)
		case 'l':
			rl, err := resourceList(v)
			if err != nil {
				return nil, "", err
			}
			crit = append(crit, rl...)
		case 'q':
			op, rest, err := leadingOp(v)
			if err != nil {
				return nil, "", fmt.Errorf("illegal -q value: %v", err)
			}
			if strings.ContainsAny(strings.TrimSpace(rest), " \t\n") || strings.Count(rest, "@") > 1 {
				return nil, "", &badDestination{rest}
			}
			queue, at, _ := strings.Cut(strings.TrimSpace(rest), "@")
			if queue != "" {
				add(proto.AttrQueue, "", queue, op)
			}
			server = at
		case 'r':
			switch strings.TrimSpace(v) {
			case "y":
				add(proto.AttrRerunable, "", "True", proto.OpEQ)
			case "n":
				add(proto.AttrRerunable, "", "False", proto.OpEQ)
			default:
				return nil, "", fmt.Errorf("illegal -r value: %q", v)
			}
		case 'A':
			add(proto.AttrAccountName, "", v, proto.OpEQ)
		case 'N':
			add(proto.AttrJobName, "", v, proto.OpEQ)
		case 'P':
			add(proto.AttrProject, "", v, proto.OpEQ)
		case 'u':
			add(proto.AttrUserList, "", v, proto.OpEQ)
		case 'J':
			add(proto.AttrArray, "", "True", proto.OpEQ)
		case 'H':
			add(proto.AttrJobState, "", "FM", proto.OpEQ)
			req.History = true
		case 'x':
			req.History = true
		case 'T':
			req.Subjobs = true // jobs and subjobs, not the arrays themselves
		}
	}
	req.Criteria = crit
	return req, server, nil
}

// badDestination is a -q value OpenPBS's parse_destination_id refuses
// (blanks inside, a second '@').
type badDestination struct{ dest string }

func (e *badDestination) Error() string { return "illegally formed destination: " + e.dest }

func runWith(env *cmdutil.Env, args []string, d deps) int {
	now, loc := d.now(), d.loc
	if loc == nil {
		loc = time.UTC
	}
	req, server, err := parse(env.Personality(), args, now, loc)
	var bad *badDestination
	if errors.As(err, &bad) {
		env.Errorf("%v", err) // OpenPBS prints no usage after it
		return 2
	}
	if err != nil {
		env.Errorf("%v", err)
		fmt.Fprint(env.Stderr, usageText)
		return 2
	}
	if server != "" && !env.NamesServer(server, "") {
		// OpenPBS connects to the server of -q queue@server. Commands
		// here reach only their own server, so another one is reported
		// as OpenPBS reports a server it cannot resolve.
		fmt.Fprintf(env.Stderr, "%s: cannot connect to server %s (errno=%d)\n", env.Name, server, proto.PBSE_BADHOST)
		return proto.PBSE_BADHOST.ExitStatus()
	}
	c, err := d.connect()
	if err != nil {
		return env.Fail(err)
	}
	defer c.Close()
	ids, err := c.SelectJobs(req)
	if err != nil {
		rc := env.Fail(err)
		if proto.CodeOf(err) == proto.PBSE_JOBHISTNOTSET {
			return 0 // as OpenPBS: history is off, so there is nothing more to select
		}
		return rc
	}
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(id + "\n")
	}
	if _, err := fmt.Fprint(env.Stdout, b.String()); err != nil {
		env.Errorf("%v", err)
		return 1
	}
	return 0
}
