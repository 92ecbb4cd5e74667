package resc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Type is the value type of a resource.
type Type uint8

// Resource types.
const (
	TypeString   Type = iota // compared for equality only
	TypeLong                 // integer
	TypeFloat                // decimal number
	TypeSize                 // bytes, written with a unit
	TypeDuration             // seconds, written [[H:]M:]S
	TypeBool                 // True / False
	TypeSelect               // chunk spec
	TypeNodes                // Torque node spec
	TypePlace                // placement spec
)

// Def describes one resource.
type Def struct {
	Name string
	Type Type
	// Chunk marks host-level resources that may appear inside a select
	// chunk and are summed into the job-wide total.
	Chunk bool
}

// builtin lists the resources the system knows without configuration.
var builtin = []Def{
	{"ncpus", TypeLong, true},
	{"mem", TypeSize, true},
	{"vmem", TypeSize, true},
	{"pmem", TypeSize, false},
	{"pvmem", TypeSize, false},
	{"mpiprocs", TypeLong, true},
	{"ompthreads", TypeLong, true},
	{"ngpus", TypeLong, true},
	{"naccelerators", TypeLong, true},
	{"accelerator", TypeBool, true},
	{"arch", TypeString, true},
	{"host", TypeString, true},
	{"vnode", TypeString, true},
	{"aoe", TypeString, true},
	{"walltime", TypeDuration, false},
	{"soft_walltime", TypeDuration, false},
	{"min_walltime", TypeDuration, false},
	{"max_walltime", TypeDuration, false},
	{"cput", TypeDuration, false},
	{"pcput", TypeDuration, false},
	{"file", TypeSize, false},
	{"nice", TypeLong, false},
	{"nodect", TypeLong, false},
	{"cpupercent", TypeLong, false},
	{"software", TypeString, false},
	{"select", TypeSelect, false},
	{"nodes", TypeNodes, false},
	{"place", TypePlace, false},
	{"neednodes", TypeString, false},
	{"procs", TypeLong, false},
	{"ppn", TypeLong, false},
}

// Lookup returns the definition of a built-in resource, else a string
// that is not host-level (Table.Lookup of the built-ins alone).
func Lookup(name string) Def { return (*Table)(nil).Lookup(name) }

// Consumable reports whether a built-in chunk resource is an amount taken
// from a node (Table.Consumable of the built-ins alone).
func Consumable(name string) bool { return (*Table)(nil).Consumable(name) }

// Builtin lists the built-in resources, in a fixed order.
func Builtin() []Def { return append([]Def(nil), builtin...) }

// Known reports whether name is a built-in resource.
func Known(name string) bool {
	for _, d := range builtin {
		if d.Name == name {
			return true
		}
	}
	return false
}

// Error is a bad resource value.
type Error struct {
	Resource string
	Value    string
	Reason   string
}

func (e *Error) Error() string {
	if e.Resource == "" {
		return fmt.Sprintf("%q: %s", e.Value, e.Reason)
	}
	return fmt.Sprintf("%s=%q: %s", e.Resource, e.Value, e.Reason)
}

// sizeUnits maps a unit letter to its multiplier in bytes.
var sizeUnits = map[byte]int64{'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30, 't': 1 << 40, 'p': 1 << 50}

// ParseSize parses "<int>[kmgtp][bw]" (case-insensitive) into bytes. A bare
// number is bytes; "w" means 8-byte words.
func ParseSize(s string) (int64, error) {
	bytes, _, err := parseSize(s)
	return bytes, err
}

// parseSize also returns the canonical spelling of s.
func parseSize(s string) (int64, string, error) {
	bad := func(why string) (int64, string, error) { return 0, "", &Error{Value: s, Reason: why} }
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return bad("size must start with a number")
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return bad("size out of range")
	}
	unit := t[i:]
	mult := int64(1)
	canonUnit := "b"
	if unit != "" {
		if m, ok := sizeUnits[unit[0]]; ok {
			mult = m
			canonUnit = unit[:1] + "b"
			unit = unit[1:]
		}
		switch unit {
		case "", "b":
		case "w":
			mult *= 8
			canonUnit = strings.TrimSuffix(canonUnit, "b") + "w"
		default:
			return bad("unknown size unit (want k, m, g, t or p followed by b or w)")
		}
	}
	if n > math.MaxInt64/mult {
		return bad("size out of range")
	}
	return n * mult, t[:i] + canonUnit, nil
}

// FormatSize writes bytes in the largest unit that divides it exactly
// ("600mb", "614400kb", "1000b").
func FormatSize(bytes int64) string {
	units := []struct {
		suffix string
		mult   int64
	}{{"pb", 1 << 50}, {"tb", 1 << 40}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}}
	if bytes != 0 {
		for _, u := range units {
			if bytes%u.mult == 0 {
				return strconv.FormatInt(bytes/u.mult, 10) + u.suffix
			}
		}
	}
	return strconv.FormatInt(bytes, 10) + "b"
}

// FormatKB writes bytes in kilobytes, the unit moms report usage in.
func FormatKB(bytes int64) string { return strconv.FormatInt((bytes+1023)/1024, 10) + "kb" }

// ParseDuration parses "[[H:]M:]S" with unpadded fields, hours of any size
// and an optional fraction of a second, which is dropped.
func ParseDuration(s string) (int64, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) (int64, error) { return 0, &Error{Value: s, Reason: why} }
	if t == "" {
		return bad("empty duration")
	}
	if i := strings.IndexByte(t, '.'); i >= 0 {
		frac := t[i+1:]
		for j := 0; j < len(frac); j++ {
			if frac[j] < '0' || frac[j] > '9' {
				return bad("bad fraction of a second")
			}
		}
		t = t[:i]
	}
	parts := strings.Split(t, ":")
	if len(parts) > 3 {
		return bad("too many fields (want [[H:]M:]S)")
	}
	var total int64
	for i, p := range parts {
		if p == "" {
			return bad("empty field")
		}
		for j := 0; j < len(p); j++ {
			if p[j] < '0' || p[j] > '9' {
				return bad("fields must be unsigned integers")
			}
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v > math.MaxInt64/3600 {
			return bad("out of range")
		}
		if i > 0 && v >= 60 && len(parts) > 1 {
			return bad("minutes and seconds must be below 60")
		}
		if total > (math.MaxInt64-v)/60 {
			return bad("out of range")
		}
		total = total*60 + v
	}
	return total, nil
}

// FormatDuration writes seconds as HH:MM:SS.
func FormatDuration(secs int64) string {
	if secs < 0 {
		secs = 0
	}
	// As "%02d:%02d:%02d" would write it, without fmt: replays format a
	// walltime for every job.
	b := make([]byte, 0, 8)
	for i, v := range [3]int64{secs / 3600, secs / 60 % 60, secs % 60} {
		if i > 0 {
			b = append(b, ':')
		}
		if v < 10 {
			b = append(b, '0')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
}

// ParseBool accepts the PBS spellings of a boolean.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "t", "y", "yes", "1", "on":
		return true, nil
	case "false", "f", "n", "no", "0", "off":
		return false, nil
	}
	return false, &Error{Value: s, Reason: "not a boolean (want True or False)"}
}

// FormatBool writes "True" or "False".
func FormatBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// Canonical validates value for resource name and returns the form the
// server stores (Table.Canonical of the built-ins alone).
func Canonical(name, value string) (string, error) { return (*Table)(nil).Canonical(name, value) }

// canonicalAs is Canonical for a value of type t, built-in or custom: the
// one parser of each type's format.
func canonicalAs(name string, t Type, value string) (string, error) {
	wrap := func(err error) error {
		if e, ok := err.(*Error); ok {
			e.Resource = name
			e.Value = value
			return e
		}
		return &Error{Resource: name, Value: value, Reason: err.Error()}
	}
	switch t {
	case TypeLong:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return "", &Error{Resource: name, Value: value, Reason: "not an integer"}
		}
		if n < 0 {
			return "", &Error{Resource: name, Value: value, Reason: "must not be negative"}
		}
		return strconv.FormatInt(n, 10), nil
	case TypeFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", &Error{Resource: name, Value: value, Reason: "not a number"}
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	case TypeSize:
		_, canon, err := parseSize(value)
		if err != nil {
			return "", wrap(err)
		}
		return canon, nil
	case TypeDuration:
		secs, err := ParseDuration(value)
		if err != nil {
			return "", wrap(err)
		}
		return FormatDuration(secs), nil
	case TypeBool:
		b, err := ParseBool(value)
		if err != nil {
			return "", wrap(err)
		}
		return FormatBool(b), nil
	case TypeSelect:
		sel, err := ParseSelect(value)
		if err != nil {
			return "", wrap(err)
		}
		return sel.String(), nil
	case TypeNodes:
		if _, err := ParseNodes(value); err != nil {
			return "", wrap(err)
		}
		return strings.TrimSpace(value), nil
	case TypePlace:
		p, err := ParsePlace(value)
		if err != nil {
			return "", wrap(err)
		}
		return p.String(), nil
	}
	if strings.ContainsAny(value, ControlChars) {
		return "", &Error{Resource: name, Value: value, Reason: "contains a line break or NUL"}
	}
	return value, nil
}

// ControlChars are the characters no attribute or resource value may hold:
// they would end or forge a line of an accounting record, a log or a
// listing (NUL, newline, carriage return).
const ControlChars = "\x00\n\r"

// maxNameLen bounds a resource name.
const maxNameLen = 64

// ValidName checks a resource name as OpenPBS does: a letter, then
// letters, digits, '_' or '-'. Names reach accounting records and qstat
// output as keys, so nothing else may pass.
func ValidName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return &Error{Resource: name, Reason: fmt.Sprintf("a resource name has 1 to %d characters", maxNameLen)}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if letter || i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '-') {
			continue
		}
		return &Error{Resource: name, Reason: "a resource name is a letter followed by letters, digits, '_' or '-'"}
	}
	return nil
}

// Number converts a canonical value of a numeric built-in resource to a
// number (Table.Number of the built-ins alone).
func Number(name, value string) (float64, bool) { return (*Table)(nil).Number(name, value) }

// numberAs is Number for a value of type t: bytes, seconds, or the
// integer or float itself.
func numberAs(t Type, value string) (float64, bool) {
	switch t {
	case TypeLong, TypeFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		return f, err == nil
	case TypeSize:
		b, err := ParseSize(value)
		return float64(b), err == nil
	case TypeDuration:
		s, err := ParseDuration(value)
		return float64(s), err == nil
	}
	return 0, false
}

// Compare orders two values of a built-in resource (Table.Compare of the
// built-ins alone).
func Compare(name, a, b string) (cmp int, ordered bool) { return (*Table)(nil).Compare(name, a, b) }
