package schedpriv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Problem is one finding in a sched_priv file: an error or a warning, with
// the file and line it concerns, so an admin can go straight to it.
type Problem struct {
	File string // file name as given to the parser (or a path, from privdir.Load)
	Line int    // 1-based; 0 when the finding concerns the whole file
	Msg  string
}

// String renders "file:line: message" ("file: message" without a line),
// the form editors and grep understand.
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// Error lets a single Problem be returned as an error.
func (p Problem) Error() string { return p.String() }

// Errors is every error found in one or more files, in the order found. The
// parsers return it (as error) rather than stopping at the first problem, so
// an admin fixes a file in one pass.
type Errors []Problem

// Error joins the problems one per line.
func (e Errors) Error() string {
	s := make([]string, len(e))
	for i, p := range e {
		s[i] = p.String()
	}
	return strings.Join(s, "\n")
}

// AsErrors extracts the list of problems from an error returned by this
// package; ok is false for other errors (an I/O error, say).
func AsErrors(err error) (Errors, bool) {
	var e Errors
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// report collects errors and warnings for one file while it is parsed.
type report struct {
	file     string
	errs     Errors
	warnings []Problem
}

func (r *report) errorf(line int, format string, a ...any) {
	r.errs = append(r.errs, Problem{File: r.file, Line: line, Msg: fmt.Sprintf(format, a...)})
}

func (r *report) warnf(line int, format string, a ...any) {
	r.warnings = append(r.warnings, Problem{File: r.file, Line: line, Msg: fmt.Sprintf(format, a...)})
}

// err returns the collected errors as an error, or nil when there are none.
// A nil Errors must not be returned as a non-nil error interface.
func (r *report) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return r.errs
}

// maxLine bounds one line of a sched_priv file. The classic reader silently
// cut lines at 256 bytes; we accept far more but still refuse unbounded input.
const maxLine = 64 * 1024

// eachLine calls fn for every line of r with its 1-based number, without the
// line terminator (a CR before the LF is dropped too: files edited on other
// systems must not grow a stray '\r' in their last word). A read error or an
// over-long line is reported and ends the scan.
func eachLine(r io.Reader, rep *report, fn func(n int, line string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	n := 0
	for sc.Scan() {
		n++
		fn(n, strings.TrimSuffix(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			rep.errorf(n+1, "line longer than %d bytes", maxLine)
			return
		}
		rep.errorf(0, "read error: %v", err)
	}
}

// isBlank reports ASCII white space. The files are ASCII in practice, and a
// fixed set keeps tokenising independent of Unicode tables.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'
}

// fields splits s at runs of ASCII white space.
func fields(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isBlank(s[j]) {
			j++
		}
		if j > i {
			out = append(out, s[i:j])
		}
		i = j
	}
	return out
}

// isComment reports whether a line is skipped by every sched_priv parser:
// blank, or starting (after white space) with '#' or '*', as in PBS.
func isComment(line string) bool {
	t := strings.TrimLeft(line, " \t\v\f\r")
	return t == "" || t[0] == '#' || t[0] == '*'
}

// trailingComment reports whether the words from a line end in a comment:
// the admin guide's files never put text after the last field, but a '#'
// word there is plainly a comment and not worth an error.
func trailingComment(words []string) bool {
	return len(words) > 0 && strings.HasPrefix(words[0], "#")
}
