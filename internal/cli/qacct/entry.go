// Package qacct is qacct's logic (Grid Engine's command name and options
// over this server's accounting logs); cmd/qacct documents the command.
package qacct

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/acctlog"
	"github.com/gopbs/gopbs/internal/acctsum"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/qsubopt"
)

const usage = `usage: qacct [-o [owner]] [-g [group]] [-P [project]] [-A [account]] [-q [queue]] [-h [host]]
             [-b begin] [-e end] [-d days] [-f file|dir] [--json|--csv]
       qacct -j job_id [-f file|dir] [--json]
`

// Main is qacct's whole main (cmd/qacct calls only it).
func Main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, time.Now()))
}

// options are qacct's arguments, read once.
type options struct {
	dims   []acctsum.Dim
	filter acctsum.Filter
	w      acctlog.Window
	job    string
	file   string
	format string // "", "json" or "csv"
}

// need is every dimension the report groups or filters by.
func (o options) need() []acctsum.Dim {
	need := append([]acctsum.Dim{}, o.dims...)
	for d := range o.filter {
		if !slices.Contains(need, d) {
			need = append(need, d)
		}
	}
	return need
}

// dimFlags are the grouping options, each with an optional value.
var dimFlags = map[string]acctsum.Dim{
	"-o": acctsum.ByOwner, "-g": acctsum.ByGroup, "-P": acctsum.ByProject,
	"-A": acctsum.ByAccount, "-q": acctsum.ByQueue, "-h": acctsum.ByHost,
}

var errHelp = errors.New("help")

// parse reads the arguments; now anchors -d and dates without a year.
func parse(args []string, now time.Time) (options, error) {
	o := options{filter: acctsum.Filter{}}
	value := func(i *int, name string) (string, error) {
		if *i+1 >= len(args) {
			return "", fmt.Errorf("option %s needs a value", name)
		}
		*i++
		return args[*i], nil
	}
	days := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		if d, ok := dimFlags[a]; ok {
			o.dims = append(o.dims, d)
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				o.filter[d] = args[i]
			}
			continue
		}
		var err error
		var v string
		switch a {
		case "--help", "-help":
			return o, errHelp
		case "--json", "--csv":
			if o.format != "" {
				return o, errors.New("give one of --json and --csv")
			}
			o.format = a[2:]
		case "-j":
			if o.job, err = value(&i, a); err != nil {
				return o, err
			}
		case "-f":
			if o.file, err = value(&i, a); err != nil {
				return o, err
			}
		case "-b", "-e":
			if v, err = value(&i, a); err != nil {
				return o, err
			}
			t, err := pastDateTime(v, now)
			if err != nil {
				return o, fmt.Errorf("%s %q: %v", a, v, err)
			}
			if a == "-b" {
				o.w.From = t
			} else {
				o.w.To = t
			}
		case "-d":
			if v, err = value(&i, a); err != nil {
				return o, err
			}
			if days, err = strconv.Atoi(v); err != nil || days <= 0 {
				return o, fmt.Errorf("-d %q: want a number of days above 0", v)
			}
		default:
			if strings.HasPrefix(a, "-") {
				return o, fmt.Errorf("unknown option %s", a)
			}
			return o, fmt.Errorf("unexpected argument %q", a)
		}
	}
	if days > 0 {
		if !o.w.From.IsZero() {
			return o, errors.New("give -b or -d, not both")
		}
		o.w.From = now.AddDate(0, 0, -days)
	}
	if !o.w.From.IsZero() && !o.w.To.IsZero() && !o.w.From.Before(o.w.To) {
		return o, fmt.Errorf("-b %s is not before -e %s", o.w.From.Format(time.DateTime), o.w.To.Format(time.DateTime))
	}
	if o.job != "" && (len(o.dims) > 0 || o.format == "csv") {
		return o, errors.New("-j shows one job: it takes no grouping option nor --csv")
	}
	return o, nil
}

// pastDateTime reads PBS's datetime, [[CC]YY]MMDDhhmm[.SS], in now's
// location; without a year, the last such time up to now.
func pastDateTime(s string, now time.Time) (time.Time, error) {
	body, _, _ := strings.Cut(s, ".")
	if len(body) != 8 && len(body) != 10 && len(body) != 12 || strings.Trim(body, "0123456789") != "" {
		return time.Time{}, errors.New("want [[CC]YY]MMDDhhmm[.SS]")
	}
	t, err := qsubopt.ParseDateTime(s, now)
	if err != nil {
		return t, err
	}
	if len(body) == 8 && t.After(now) {
		t = t.AddDate(-1, 0, 0)
	}
	return t, nil
}

func run(args []string, stdout, stderr io.Writer, now time.Time) int {
	o, err := parse(args, now)
	if err == errHelp {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "qacct: %v\n%s", err, usage)
		return 2
	}
	dir := o.file
	if dir == "" {
		cfg, err := config.Load()
		if err != nil {
			fmt.Fprintln(stderr, "qacct:", err)
			return 2
		}
		dir = filepath.Join(cfg.ServerPriv(), "accounting")
	}
	loc := now.Location()
	files, err := acctlog.DayFiles(dir, loc)
	if err != nil {
		fmt.Fprintln(stderr, "qacct:", err)
		return 1
	}
	cache := dir
	if len(files) == 1 && files[0].Day.IsZero() {
		cache = filepath.Dir(dir)
	}
	if o.job != "" {
		return showJob(o, files, cache, loc, stdout, stderr)
	}
	sums := acctlog.Summarize(files, cache, o.w, o.need(), loc)
	return report(o, sums, stdout, stderr)
}

// warnDamage tells of what could not be read: every total printed
// leaves it out, and says so.
func warnDamage(sums []*acctlog.Summary, stderr io.Writer) (damaged int64) {
	first := ""
	for _, s := range sums {
		if s.Unread != "" {
			fmt.Fprintf(stderr, "qacct: cannot read a log: %s\n", s.Unread)
		}
		damaged += s.Damaged
		if first == "" {
			first = s.FirstDamage
		}
	}
	if damaged > 0 {
		fmt.Fprintf(stderr, "qacct: skipped %d damaged line(s), left out of every total; the first: %s\n", damaged, first)
	}
	return damaged
}
