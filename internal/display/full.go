package display

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/gopbs/gopbs/proto"
)

// Line limits of the full listings: OpenPBS wraps at 78 columns, Torque at
// 77 (reference §5.4).
const (
	proLineLimit    = 78
	torqueLineLimit = 77
)

func (o Options) lineLimit() int {
	if o.torque() {
		return torqueLineLimit
	}
	return proLineLimit
}

// FullJobs writes the -f listing: "Job Id: <id>", one indented
// "name = value" line per attribute (times as ctime strings), a finished
// job's efficiency.cpu, .mem and .walltime (efficiencyLines), and a blank
// line after each job.
func FullJobs(w io.Writer, jobs []proto.Status, o Options) error {
	e := &errWriter{w: w}
	for _, j := range jobs {
		e.print("Job Id: ", printable(j.Name), "\n")
		for _, a := range present(o.Personality, j.Attrs) {
			v := a.Value
			if IsTimeAttr(a) {
				v = showTime(a, o.loc())
			}
			e.print(AttrLine(a.FullName(), v, o.lineLimit(), o.OneLine))
		}
		for _, a := range efficiencyLines(j.Attrs) {
			e.print(AttrLine(a.FullName(), a.Value, o.lineLimit(), o.OneLine))
		}
		e.print("\n")
	}
	return e.err
}

// FullQueues writes the -Qf listing: "Queue: <name>" and its attributes.
func FullQueues(w io.Writer, queues []proto.Status, o Options) error {
	return fullObjects(w, "Queue: ", queues, o)
}

// FullServers writes the -Bf listing: "Server: <name>" and its attributes.
func FullServers(w io.Writer, servers []proto.Status, o Options) error {
	return fullObjects(w, "Server: ", servers, o)
}

func fullObjects(w io.Writer, title string, objs []proto.Status, o Options) error {
	e := &errWriter{w: w}
	for _, s := range objs {
		e.print(title, printable(s.Name), "\n")
		for _, a := range s.Attrs {
			e.print(AttrLine(a.FullName(), a.Value, o.lineLimit(), o.OneLine))
		}
		e.print("\n")
	}
	return e.err
}

// AttrLine renders one attribute of a full listing: four blanks,
// "name = value" and a newline. Unless oneLine, a value that does not fit
// in limit columns is wrapped the PBS way: it is split at commas, a part
// that does not fit goes on a continuation line, and a part longer than a
// line is broken where it reaches the limit. Every continuation line starts
// with a TAB, which is what OOD and pbs4py join on. The commas themselves
// are not counted, as in PBS.
//
// Two PBS defects are not reproduced: empty list items are kept (strtok
// drops them, changing the value) and no line is left holding only a TAB
// (PBS breaks after the last character of a part even when nothing
// follows). Removing every "\n\t" from the result therefore gives back
// exactly the printable form of the value.
func AttrLine(name, value string, limit int, oneLine bool) string {
	var b strings.Builder
	name = printable(name)
	value = printable(value)
	b.WriteString("    " + name + " = ")
	if oneLine {
		b.WriteString(value + "\n")
		return b.String()
	}
	start := utf8.RuneCountInString(name) + 7
	parts := strings.Split(value, ",")
	for i, p := range parts {
		n := utf8.RuneCountInString(p)
		if n+start < limit || n == 0 { // an empty item needs no line of its own
			b.WriteString(p)
			start += n
		} else {
			if i > 0 {
				b.WriteString("\n\t")
				start = 9 // a TAB and one more column, as PBS counts it
			}
			broken := false
			for _, r := range p {
				if broken {
					b.WriteString("\n\t")
					start = 8
					broken = false
				}
				b.WriteRune(r)
				start++
				if start > limit {
					broken = true
				}
			}
		}
		if i < len(parts)-1 {
			b.WriteByte(',')
		}
	}
	b.WriteString("\n")
	return b.String()
}

// DSV writes PBS Pro's -F dsv form of a full listing: per object one line,
// the title ("Job Id: <id>") and each "name=value" separated by the
// delimiter. A delimiter or backslash inside a value is escaped with a
// backslash, and newlines show as \n, so that every object is one line.
func DSV(w io.Writer, title string, objs []proto.Status, jobs bool, o Options) error {
	d := o.Delim
	if d == "" {
		d = "|"
	}
	esc := func(s string) string {
		s = strings.ReplaceAll(s, `\`, `\\`)
		s = strings.ReplaceAll(s, d, `\`+d)
		return printable(s)
	}
	e := &errWriter{w: w}
	for _, s := range objs {
		e.print(title, esc(s.Name), d)
		attrs := s.Attrs
		if jobs {
			attrs = present(o.Personality, attrs)
		}
		for i, a := range attrs {
			v := a.Value
			if jobs && IsTimeAttr(a) {
				v = showTime(a, o.loc())
			}
			if i > 0 {
				e.print(d)
			}
			e.print(esc(a.FullName()), "=", esc(v))
		}
		e.print("\n")
	}
	return e.err
}
