// Package entlim reads and writes OpenPBS's entity limits, the values of
// max_run, max_run_soft, max_queued, queued_jobs_threshold and their
// _res.RES forms on the server and on queues:
//
//	[u:PBS_GENERIC=10], [u:alice=20], [g:PBS_GENERIC=50], [o:PBS_ALL=200], [p:proj1=4]
//
// Each entry limits one entity: a user (u), a group (g) or a project (p)
// by name, every one not named (PBS_GENERIC), or all jobs together (o,
// whose only name is PBS_ALL). A named entry wins over the generic one of
// its kind. For a _res form the number is an amount of that resource, in
// its units (mem's "10gb").
//
// The package is pure: the server parses a value once when it is set
// (Parse) and stores the canonical text (String); the scheduler and the
// server's admission read it back with Parse and ask Limit.
package entlim

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Kind is the kind of entity an entry limits.
type Kind byte

// Kinds, by their letters.
const (
	User    Kind = 'u'
	Group   Kind = 'g'
	Project Kind = 'p'
	Overall Kind = 'o'
)

// Word is the kind's name in messages: "user", "group", "project" ("" for
// the overall kind, which names no entity).
func (k Kind) Word() string {
	switch k {
	case User:
		return "user"
	case Group:
		return "group"
	case Project:
		return "project"
	}
	return ""
}

// Generic names every entity of a kind not named; All is the overall
// entry's only name.
const (
	Generic = "PBS_GENERIC"
	All     = "PBS_ALL"
)

// Entry is one "[k:name=value]".
type Entry struct {
	Kind  Kind
	Name  string
	Value float64 // a count, or an amount of the resource
	Text  string  // the value as written (canonical), for messages
}

// Limits is one attribute's entries, in canonical order.
type Limits []Entry

// ValueParser turns an entry's value into a number: a count for the
// plain forms, the resource's amount for _res forms. It returns the
// canonical text too.
type ValueParser func(v string) (float64, string, error)

// maxEntries bounds the entries of one value.
const maxEntries = 10000

// Parse reads a value such as "[u:PBS_GENERIC=10], [g:grp=5]". An empty
// value is refused (unset the attribute instead); so is an entry of no
// known kind, a name an entity cannot have, o with another name than
// PBS_ALL, or the same entity twice.
func Parse(s string, value ValueParser) (Limits, error) {
	rest := strings.TrimSpace(s)
	if rest == "" {
		return nil, errors.New("empty entity limit: want [u:NAME=N], [g:NAME=N], [p:NAME=N] or [o:PBS_ALL=N]")
	}
	var out Limits
	seen := map[string]bool{}
	for rest != "" {
		if len(out) >= maxEntries {
			return nil, fmt.Errorf("more than %d entries", maxEntries)
		}
		if rest[0] != '[' {
			return nil, fmt.Errorf("%q: want an entry [k:name=value]", cut(rest))
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return nil, fmt.Errorf("%q: no closing ]", cut(rest))
		}
		e, err := parseEntry(rest[1:end], value)
		if err != nil {
			return nil, err
		}
		key := string(e.Kind) + ":" + e.Name
		if seen[key] {
			return nil, fmt.Errorf("[%s] is given twice", key)
		}
		seen[key] = true
		out = append(out, e)
		rest = strings.TrimSpace(rest[end+1:])
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, fmt.Errorf("%q: entries are separated by commas", cut(rest))
		}
		rest = strings.TrimSpace(rest[1:])
		if rest == "" {
			return nil, errors.New("a comma with no entry after it")
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return order(out[a]) < order(out[b]) })
	return out, nil
}

func cut(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// order sorts u, g, p then o, and within a kind the generic entry first,
// then the names.
func order(e Entry) string {
	rank := map[Kind]string{User: "0", Group: "1", Project: "2", Overall: "3"}[e.Kind]
	if e.Name == Generic {
		return rank + "0"
	}
	return rank + "1" + e.Name
}

func parseEntry(s string, value ValueParser) (Entry, error) {
	k, rest, ok := strings.Cut(s, ":")
	k = strings.TrimSpace(k)
	if !ok || len(k) != 1 || !strings.Contains("ugpo", k) {
		return Entry{}, fmt.Errorf("[%s]: want u, g, p or o before the colon", s)
	}
	name, v, ok := strings.Cut(rest, "=")
	name = strings.TrimSpace(name)
	if !ok {
		return Entry{}, fmt.Errorf("[%s]: want name=value", s)
	}
	e := Entry{Kind: Kind(k[0]), Name: name}
	switch {
	case e.Kind == Overall && name != All:
		return Entry{}, fmt.Errorf("[%s]: the overall limit's name is %s", s, All)
	case e.Kind != Overall && name == All:
		return Entry{}, fmt.Errorf("[%s]: %s is the overall limit's name (o:%s)", s, All, All)
	case name == "" || strings.ContainsAny(name, " \t,[]:=\n\r\x00"):
		return Entry{}, fmt.Errorf("[%s]: %q is not an entity name", s, name)
	}
	n, text, err := value(strings.TrimSpace(v))
	if err != nil {
		return Entry{}, fmt.Errorf("[%s]: %w", s, err)
	}
	e.Value, e.Text = n, text
	return e, nil
}

// String writes l canonically: "[u:PBS_GENERIC=10],[u:alice=20]".
func (l Limits) String() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%c:%s=%s]", e.Kind, e.Name, e.Text)
	}
	return b.String()
}

// Limit is the entry that limits entity name of kind k: its own entry,
// else its kind's generic one (for o, PBS_ALL's). ok is false when none
// does.
func (l Limits) Limit(k Kind, name string) (e Entry, ok bool) {
	var generic *Entry
	for i := range l {
		if l[i].Kind != k {
			continue
		}
		if l[i].Name == name && k != Overall {
			return l[i], true
		}
		if l[i].Name == Generic || k == Overall {
			generic = &l[i]
		}
	}
	if generic != nil {
		return *generic, true
	}
	return Entry{}, false
}

// Generic reports whether e is a kind's generic entry.
func (e Entry) Generic() bool { return e.Name == Generic }
