// Package tracejob is tracejob's logic; cmd/tracejob documents the command.
package tracejob

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/getopt"
)

const usage = "usage: tracejob [-a|-s|-l|-m] [-z] [-c count] [-n days] [-p pbs_home] job_identifier\n"

// Main is tracejob's whole main (cmd/tracejob calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, time.Now()))
}

type options struct {
	days             int
	skip             map[byte]bool
	dedup            bool
	maxCount         int
	home, server, id string
}

func run(args []string, stdout, stderr io.Writer, now time.Time) int {
	o, err := parse(args)
	if err == errHelp {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "tracejob:", err)
		fmt.Fprint(stderr, usage)
		return 2
	}
	if o.home == "" || !strings.Contains(o.id, ".") {
		cfg, err := config.Load()
		if err != nil {
			fmt.Fprintln(stderr, "tracejob:", err)
			return 2
		}
		if o.home == "" {
			o.home = cfg.Home
		}
		o.server = cfg.ServerName()
	}
	id := o.id
	if !strings.Contains(id, ".") {
		id += "." + o.server
	}
	entries := collect(o, id, now)
	fmt.Fprintf(stdout, "\nJob: %s\n\n", id)
	for _, e := range entries {
		fmt.Fprintf(stdout, "%s  %c    %s\n", e.at.Format("01/02/2006 15:04:05"), e.source, e.text)
	}
	if len(entries) == 0 {
		fmt.Fprintf(stderr, "tracejob: nothing found for %s in the last %d day(s) under %s\n", id, o.days, o.home)
		return 1
	}
	return 0
}

var errHelp = fmt.Errorf("help")

func parse(args []string) (*options, error) {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
		return nil, errHelp
	}
	opts, rest, err := getopt.Spec{Short: "aslmzc:n:p:"}.Parse(args)
	if err != nil {
		return nil, err
	}
	o := &options{days: 1, skip: map[byte]bool{}}
	for _, op := range opts {
		switch op.Name {
		case 'a':
			o.skip['A'] = true
		case 's':
			o.skip['S'] = true
		case 'l':
			o.skip['L'] = true
		case 'm':
			o.skip['M'] = true
		case 'z':
			o.dedup = true
		case 'c', 'n':
			v, err := strconv.Atoi(op.Value)
			if err != nil || v < 1 {
				return nil, fmt.Errorf("-%c %s: want a positive number", op.Name, op.Value)
			}
			if op.Name == 'c' {
				o.maxCount = v
			} else {
				o.days = v
			}
		case 'p':
			o.home = op.Value
		}
	}
	if len(rest) != 1 || rest[0] == "" {
		return nil, fmt.Errorf("one job identifier is needed")
	}
	o.id = rest[0]
	return o, nil
}

// collect reads every source for the last o.days days and returns the
// job's entries in time order, to the second as tracejob prints them
// (accounting records have no finer time): within a second the server's
// lines come first, then the scheduler's, the mom's and the accounting
// records, each source in its file's order.
func collect(o *options, id string, now time.Time) []entry {
	loc := now.Location()
	sources := []struct {
		letter byte
		dir    string
		read   func(line, id string, loc *time.Location) (time.Time, string, bool)
	}{
		{'S', filepath.Join(o.home, "server_logs"), logLine},
		{'L', filepath.Join(o.home, "sched_logs"), logLine},
		{'M', filepath.Join(o.home, "mom_logs"), logLine},
		{'A', filepath.Join(o.home, "server_priv", "accounting"), acctLine},
	}
	var out []entry
	for _, src := range sources {
		if o.skip[src.letter] {
			continue
		}
		for d := o.days - 1; d >= 0; d-- {
			day := now.AddDate(0, 0, -d).Format("20060102")
			readFile(filepath.Join(src.dir, day), func(line string) {
				if at, text, ok := src.read(line, id, loc); ok {
					out = append(out, entry{at: at.Truncate(time.Second), source: src.letter, text: text})
				}
			})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].at.Before(out[b].at) })
	return filter(out, o)
}

// filter applies -z and -c.
func filter(es []entry, o *options) []entry {
	if o.maxCount > 0 {
		count := map[string]int{}
		for _, e := range es {
			count[e.text]++
		}
		kept := es[:0:0]
		for _, e := range es {
			if count[e.text] <= o.maxCount {
				kept = append(kept, e)
			}
		}
		es = kept
	}
	if o.dedup {
		kept := es[:0:0]
		for i, e := range es {
			if i > 0 && es[i-1].text == e.text && es[i-1].source == e.source {
				continue
			}
			kept = append(kept, e)
		}
		es = kept
	}
	return es
}

// readFile calls fn for each line of a file; a missing file is no lines
// (a day without logs).
func readFile(path string, fn func(string)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
}
