// Package stage is the syntax of a job's file staging lists, the values
// of its stagein and stageout attributes (qsub -W stagein=..., -W
// stageout=...):
//
//	local_file@host:remote_file[,local_file@host:remote_file...]
//
// For stage-in the local file is the destination on the job's first
// execution host and host:remote_file the source; for stage-out the local
// file is the source and host:remote_file the destination. A relative
// local file is relative to the job's working directory there.
//
// The rules are OpenPBS's (its qsub refuses anything else with "illegal
// -W value"): items are separated by commas, and a comma after a backslash
// belongs to the item; blanks around an item are dropped; every item has a
// local file, an '@', a host and a ':' then a remote file, all three
// non-empty; file names may hold blanks and any printable character but
// '@'; host names hold no blank, '@' or ':'. A trailing comma is an error.
// Names are data: nothing here or downstream ever hands them to a shell.
//
// The package is pure: no I/O.
package stage

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of one item, as PBS's (MAXPATHLEN, PBS_MAXSERVERNAME).
const (
	MaxPath = 4096
	MaxHost = 255
)

// MaxItems bounds a list: a value of thousands of files is a mistake or
// an attack, and each item costs the mom a copy.
const MaxItems = 1024

// Pair is one item of a list.
type Pair struct {
	Local  string // on the execution host
	Host   string
	Remote string // on Host
}

// String writes p back in list syntax (a comma escaped).
func (p Pair) String() string {
	esc := func(s string) string { return strings.ReplaceAll(s, ",", `\,`) }
	return esc(p.Local) + "@" + p.Host + ":" + esc(p.Remote)
}

// ErrEmpty is the error of an empty list.
var ErrEmpty = errors.New("empty list")

// ParseList parses a stagein or stageout value. The error says which item
// is wrong and why.
func ParseList(list string) ([]Pair, error) {
	if strings.TrimSpace(list) == "" {
		return nil, ErrEmpty
	}
	if !utf8.ValidString(list) {
		return nil, errors.New("not valid UTF-8")
	}
	var out []Pair
	start := 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) && (list[i] != ',' || i > 0 && list[i-1] == '\\') {
			continue
		}
		item := strings.TrimSpace(list[start:i])
		if i == len(list) && item == "" {
			if len(out) > 0 {
				return nil, errors.New("trailing comma")
			}
			return nil, ErrEmpty
		}
		p, err := parseItem(item)
		if err != nil {
			return nil, fmt.Errorf("item %d %q: %w", len(out)+1, item, err)
		}
		out = append(out, p)
		if len(out) > MaxItems {
			return nil, fmt.Errorf("more than %d files", MaxItems)
		}
		start = i + 1
	}
	return out, nil
}

// parseItem parses local@host:remote.
func parseItem(item string) (Pair, error) {
	if item == "" {
		return Pair{}, errors.New("empty item")
	}
	local, rest, ok := strings.Cut(item, "@")
	if !ok {
		return Pair{}, errors.New("want local_file@host:remote_file")
	}
	host, remote, ok := strings.Cut(rest, ":")
	if !ok {
		return Pair{}, errors.New("no ':' after the host name")
	}
	unesc := func(s string) string { return strings.ReplaceAll(s, `\,`, ",") }
	p := Pair{Local: unesc(local), Host: host, Remote: unesc(remote)}
	switch {
	case p.Local == "":
		return Pair{}, errors.New("no local file name")
	case host == "":
		return Pair{}, errors.New("no host name")
	case p.Remote == "":
		return Pair{}, errors.New("no remote file name")
	case strings.Contains(rest, "@"):
		return Pair{}, errors.New("more than one '@'")
	case strings.HasSuffix(p.Local, `\`) || strings.HasSuffix(p.Remote, `\`):
		// It would escape the comma after it in the stored list.
		return Pair{}, errors.New("file name ends with a backslash")
	case len(host) > MaxHost:
		return Pair{}, fmt.Errorf("host name longer than %d characters", MaxHost)
	case len(p.Local) > MaxPath || len(p.Remote) > MaxPath:
		return Pair{}, fmt.Errorf("file name longer than %d characters", MaxPath)
	}
	for _, r := range host {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return Pair{}, fmt.Errorf("host name %q holds a blank or control character", host)
		}
	}
	for _, s := range []string{p.Local, p.Remote} {
		for _, r := range s {
			if r != ' ' && r != '\t' && !unicode.IsPrint(r) {
				return Pair{}, fmt.Errorf("file name %q holds a control character", s)
			}
		}
	}
	return p, nil
}

// FormatList writes pairs as a list ParseList reads back.
func FormatList(pairs []Pair) string {
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}
