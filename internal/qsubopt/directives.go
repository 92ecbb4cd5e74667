package qsubopt

import (
	"bytes"
	"strings"
)

// DefaultPrefix is the directive prefix when neither -C nor $PBS_DPREFIX
// names one.
const DefaultPrefix = "#PBS"

// Directive is one directive found in a script.
type Directive struct {
	Line int    // 1-based line on which the directive starts
	Text string // the text after the prefix, continuation lines joined
}

// ScanDirectives returns the directives of script for prefix, in order,
// stopping at the first executable line. An empty prefix finds nothing.
func ScanDirectives(script []byte, prefix string) []Directive {
	if prefix == "" {
		return nil
	}
	// A byte order mark would make an editor-saved script's first line
	// executable and hide every directive.
	rest := bytes.TrimPrefix(script, []byte("\xef\xbb\xbf"))
	lineNo := 0
	done := false
	// next returns the following line without its CR LF. Lines are taken
	// one at a time so that a large script costs no more than its header.
	next := func() (string, bool) {
		if done {
			return "", false
		}
		line, after, found := bytes.Cut(rest, []byte("\n"))
		rest, done = after, !found
		lineNo++
		return strings.TrimSuffix(string(line), "\r"), true
	}
	var out []Directive
	for {
		line, ok := next()
		if !ok {
			return out
		}
		trimmed := strings.TrimLeft(line, " \t")
		if text, ok := cutPrefix(trimmed, prefix); ok {
			d := Directive{Line: lineNo}
			for strings.HasSuffix(text, `\`) {
				cont, ok := next()
				if !ok {
					break
				}
				// People repeat the prefix on continuation lines; joined as
				// is, it would read as the start of a comment and hide the
				// rest of the line.
				if r, ok := cutPrefix(strings.TrimLeft(cont, " \t"), prefix); ok {
					cont = " " + r
				}
				text = text[:len(text)-1] + cont
			}
			d.Text = text
			out = append(out, d)
			continue
		}
		if t := strings.TrimLeft(trimmed, " \t\v\f"); t == "" || t[0] == '#' || t[0] == ':' {
			continue
		}
		return out
	}
}

// cutPrefix reports whether line is a directive for prefix: the prefix
// followed by a blank or the end of the line. "#PBSfoo" is an ordinary
// comment, not a malformed directive.
func cutPrefix(line, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(line, prefix)
	if !ok {
		return "", false
	}
	if rest != "" && !isBlank(rest[0]) {
		return "", false
	}
	return rest, true
}
