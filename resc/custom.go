package resc

import (
	"strconv"
	"strings"
)

// TypeStringArray is OpenPBS's string_array: a list of strings separated
// by commas, which a request matches when it names one of them. It is
// placed after the built-in types so that their numbers stay as stored.
const TypeStringArray Type = TypePlace + 1

// Flag is one of the letters OpenPBS's "create resource ... flag=" takes.
type Flag uint8

// Resource flags, as OpenPBS defines them.
const (
	// FlagHost (h): a host-level resource, asked for in a select chunk
	// and matched against a node's resources_available.
	FlagHost Flag = 1 << iota
	// FlagConsumeHost (n): consumable on each host (vnode) a chunk uses;
	// needs h.
	FlagConsumeHost
	// FlagConsumeFirst (f): consumable on the first vnode of a chunk
	// only; needs h.
	FlagConsumeFirst
	// FlagConsumeQueue (q): consumable at the server and queue level.
	FlagConsumeQueue
	// FlagMom (m): sent to the moms with the job.
	FlagMom
	// FlagInvisible (i): shown to and settable by managers and operators
	// only.
	FlagInvisible
	// FlagReadOnly (r): shown to users, settable by managers and
	// operators only.
	FlagReadOnly
)

// flagLetters is the letter of each flag, in the order Flags.String
// writes them.
var flagLetters = [...]struct {
	letter byte
	flag   Flag
}{{'f', FlagConsumeFirst}, {'h', FlagHost}, {'i', FlagInvisible}, {'m', FlagMom}, {'n', FlagConsumeHost}, {'q', FlagConsumeQueue}, {'r', FlagReadOnly}}

// typeNames are the type names of "create resource ... type=", in
// OpenPBS's spelling.
var typeNames = [...]struct {
	name string
	typ  Type
}{{"boolean", TypeBool}, {"float", TypeFloat}, {"long", TypeLong}, {"size", TypeSize}, {"string", TypeString}, {"string_array", TypeStringArray}}

// ParseTypeName reads a type name of "create resource ... type=".
func ParseTypeName(s string) (Type, error) {
	for _, t := range typeNames {
		if s == t.name {
			return t.typ, nil
		}
	}
	return 0, &Error{Value: s, Reason: "unknown resource type (want boolean, float, long, size, string or string_array)"}
}

// TypeName is the name ParseTypeName reads for t, "" for a type a custom
// resource cannot have.
func TypeName(t Type) string {
	for _, n := range typeNames {
		if n.typ == t {
			return n.name
		}
	}
	return ""
}

// ParseFlags reads the letters of "flag=" ("nh", "q", "" for none). A
// letter given twice or unknown is refused rather than ignored.
func ParseFlags(s string) (Flag, error) {
	var f Flag
	for i := 0; i < len(s); i++ {
		bit := Flag(0)
		for _, l := range flagLetters {
			if l.letter == s[i] {
				bit = l.flag
			}
		}
		switch {
		case bit == 0:
			return 0, &Error{Value: s, Reason: "unknown flag " + strconv.QuoteRune(rune(s[i])) + " (want letters among f, h, i, m, n, q, r)"}
		case f&bit != 0:
			return 0, &Error{Value: s, Reason: "flag " + strconv.QuoteRune(rune(s[i])) + " given twice"}
		}
		f |= bit
	}
	return f, nil
}

// String writes the flags' letters in a fixed order.
func (f Flag) String() string {
	var b []byte
	for _, l := range flagLetters {
		if f&l.flag != 0 {
			b = append(b, l.letter)
		}
	}
	return string(b)
}

// openPBSCustom are the built-ins that OpenPBS sites define themselves
// ("create resource ngpus type=long, flag=nh", as its cgroups hook asks):
// a site's setup script defines them, and the definition is taken when
// its type is the built-in's and it is host-level.
var openPBSCustom = map[string]bool{"ngpus": true}

// OpenPBSCustom reports whether built-in name is one OpenPBS sites
// define themselves.
func OpenPBSCustom(name string) bool { return openPBSCustom[name] }

// Custom is a site's resource, as "create resource" defines it.
type Custom struct {
	Name  string
	Type  Type
	Flags Flag
}

// NewCustom checks a definition as OpenPBS does: a valid name that is not
// a built-in resource; n and f each need h and exclude each other; only
// an amount (long, float, size) can be consumed (n, f, q).
func NewCustom(name string, t Type, flags Flag) (Custom, error) {
	if err := ValidName(name); err != nil {
		return Custom{}, err
	}
	if d := Lookup(name); Known(name) && !(openPBSCustom[name] && d.Type == t && flags&FlagHost != 0) {
		return Custom{}, &Error{Resource: name, Reason: "is a built-in resource"}
	}
	if TypeName(t) == "" {
		return Custom{}, &Error{Resource: name, Reason: "a custom resource is boolean, float, long, size, string or string_array"}
	}
	bad := func(why string) (Custom, error) {
		return Custom{}, &Error{Resource: name, Value: flags.String(), Reason: why}
	}
	switch {
	case flags&FlagConsumeHost != 0 && flags&FlagConsumeFirst != 0:
		return bad("flags n and f exclude each other")
	case flags&(FlagConsumeHost|FlagConsumeFirst) != 0 && flags&FlagHost == 0:
		return bad("flags n and f need h (a host-level resource)")
	case flags&(FlagConsumeHost|FlagConsumeFirst|FlagConsumeQueue) != 0 && t != TypeLong && t != TypeFloat && t != TypeSize:
		return bad("only a long, float or size resource can be consumed (flags n, f, q); this one is " + TypeName(t))
	}
	return Custom{Name: name, Type: t, Flags: flags}, nil
}

// Consumable reports whether jobs take amounts of the resource.
func (c Custom) Consumable() bool {
	return c.Flags&(FlagConsumeHost|FlagConsumeFirst|FlagConsumeQueue) != 0
}

// Canonical checks a value against the resource's type and returns the
// form to store; the error names the resource.
func (c Custom) Canonical(value string) (string, error) {
	if strings.ContainsAny(value, ControlChars) {
		return "", &Error{Resource: c.Name, Value: value, Reason: "contains a line break or NUL"}
	}
	switch c.Type {
	case TypeStringArray:
		parts := strings.Split(value, ",")
		for i, p := range parts {
			parts[i] = strings.TrimSpace(p)
			if parts[i] == "" {
				return "", &Error{Resource: c.Name, Value: value, Reason: "a string_array has no empty element"}
			}
		}
		return strings.Join(parts, ","), nil
	case TypeString:
		return value, nil
	}
	return canonicalAs(c.Name, c.Type, value)
}
