package resc

import (
	"slices"
	"strings"
)

// Table is the resources one server knows: the built-ins and the custom
// resources its site created ("qmgr -c 'create resource ...'"). A value
// is read and compared as its resource's type through the table the
// server holds, and a scheduler gets the same definitions from it. The
// nil *Table is the built-ins alone: the package's functions (Lookup,
// Canonical, ParseSelect...) are its methods.
//
// A Table is immutable: a change of definitions makes a new one, so
// chunks parsed with it may keep a pointer to it.
type Table struct {
	custom map[string]Custom
	// counted, when not nil, are the only resources a chunk made with
	// the table takes or matches (Counting).
	counted map[string]bool
}

// NewTable makes the table of the built-ins and cs.
func NewTable(cs []Custom) *Table {
	t := &Table{custom: make(map[string]Custom, len(cs))}
	for _, c := range cs {
		t.custom[c.Name] = c
	}
	return t
}

// Counting is t for a scheduler that counts only the resources named
// (sched_config's "resources:" line, as OpenPBS's): a chunk made with it
// takes and matches only those, and host and vnode, which say where it
// goes; the others stay in its Resources, unchecked. No names: all.
func (t *Table) Counting(names []string) *Table {
	out := NewTable(t.Customs())
	if len(names) > 0 {
		out.counted = map[string]bool{"host": true, "vnode": true}
		for _, n := range names {
			out.counted[n] = true
		}
	}
	return out
}

// Counted lists the resources a Counting table counts, in order; nil
// for all.
func (t *Table) Counted() []string {
	if t == nil || t.counted == nil {
		return nil
	}
	out := make([]string, 0, len(t.counted))
	for n := range t.counted {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// counts reports whether a chunk made with t takes or matches name.
func (t *Table) counts(name string) bool { return t == nil || t.counted == nil || t.counted[name] }

// Customs lists the custom resources by name.
func (t *Table) Customs() []Custom {
	if t == nil {
		return nil
	}
	out := make([]Custom, 0, len(t.custom))
	for _, c := range t.custom {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Custom) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Invisible are the custom resources with flag i (shown to managers and
// operators only); nil when none has it.
func (t *Table) Invisible() map[string]bool {
	var out map[string]bool
	for _, c := range t.Customs() {
		if c.Flags&FlagInvisible != 0 {
			if out == nil {
				out = map[string]bool{}
			}
			out[c.Name] = true
		}
	}
	return out
}

// Custom returns the definition of custom resource name.
func (t *Table) Custom(name string) (Custom, bool) {
	if t == nil {
		return Custom{}, false
	}
	c, ok := t.custom[name]
	return c, ok
}

// With is t with c defined (replacing a definition of the same name).
func (t *Table) With(c Custom) *Table {
	out := NewTable(t.Customs())
	out.custom[c.Name] = c
	return out
}

// Without is t without custom resource name.
func (t *Table) Without(name string) *Table {
	out := NewTable(t.Customs())
	delete(out.custom, name)
	return out
}

// Lookup returns the definition of resource name: a custom one, a
// built-in, or else a string that is not host-level. Unknown resources
// are strings: sites add their own (static mom resources, "-l wd") and
// workflow tools pass unusual keys.
func (t *Table) Lookup(name string) Def {
	if c, ok := t.Custom(name); ok {
		return Def{Name: name, Type: c.Type, Chunk: c.Flags&FlagHost != 0}
	}
	for _, d := range builtin {
		if d.Name == name {
			return d
		}
	}
	return Def{Name: name, Type: TypeString}
}

// Names lists every resource t defines: the built-ins in their order,
// then the custom resources by name.
func (t *Table) Names() []string {
	out := make([]string, 0, len(builtin)+len(t.Customs()))
	for _, d := range builtin {
		out = append(out, d.Name)
	}
	for _, c := range t.Customs() {
		if !Known(c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// Defined reports whether name is a built-in or a custom resource of t.
func (t *Table) Defined(name string) bool {
	_, ok := t.Custom(name)
	return ok || Known(name)
}

// Consumable reports whether resource name is an amount jobs take (from
// a node for a host-level one: ncpus, mem, a site's "n" resource), as
// opposed to a per-process setting (mpiprocs, ompthreads) or a property
// to match (arch, host, a site's string, boolean or unconsumed number).
func (t *Table) Consumable(name string) bool {
	if c, ok := t.Custom(name); ok {
		return c.Consumable()
	}
	switch name {
	case "mpiprocs", "ompthreads":
		return false
	}
	switch t.Lookup(name).Type {
	case TypeLong, TypeFloat, TypeSize, TypeDuration:
		return true
	}
	return false
}

// Canonical validates value for resource name and returns the form the
// server stores; the error names the resource.
func (t *Table) Canonical(name, value string) (string, error) {
	if c, ok := t.Custom(name); ok {
		return c.Canonical(value)
	}
	if err := ValidName(name); err != nil {
		return "", err
	}
	return canonicalAs(name, t.Lookup(name).Type, value)
}

// Number converts a canonical value of a numeric resource to a number for
// comparison: bytes, seconds, or the integer or float itself.
func (t *Table) Number(name, value string) (float64, bool) {
	return numberAs(t.Lookup(name).Type, value)
}

// Format writes a number of resource name's type canonically (the inverse
// of Number).
func (t *Table) Format(name string, v float64) string { return formatAs(t.Lookup(name).Type, v) }

// Compare orders two values of resource name: numerically for numeric
// types, otherwise only equality is meaningful (0 if equal, 1 if not) and
// ordered reports false. A boolean compares as its truth, a string_array
// as its set of elements.
func (t *Table) Compare(name, a, b string) (cmp int, ordered bool) {
	typ := t.Lookup(name).Type
	x, okx := numberAs(typ, a)
	y, oky := numberAs(typ, b)
	if okx && oky {
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	}
	if sameAs(typ, a, b) {
		return 0, false
	}
	return 1, false
}

// sameAs reports whether two values of type typ are the same value.
func sameAs(typ Type, a, b string) bool {
	switch typ {
	case TypeBool:
		x, err1 := ParseBool(a)
		y, err2 := ParseBool(b)
		return err1 == nil && err2 == nil && x == y
	case TypeStringArray:
		x, y := SplitArray(a), SplitArray(b)
		slices.Sort(x)
		slices.Sort(y)
		return slices.Equal(x, y)
	}
	return strings.EqualFold(a, b)
}

// SplitArray splits a string_array value into its elements.
func SplitArray(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Prop is a value a chunk asks its node to have, with the resource's type,
// which says how the node's value matches it.
type Prop struct {
	Pair
	Type Type
}

// Matches reports whether a node whose value of the resource is have (ok
// false: the node has none) satisfies p, as OpenPBS matches them: a
// string without case, a string_array when every element asked for is
// one of the node's, a boolean by its truth (a node without the
// resource has False), a number by equality.
func (p Prop) Matches(have string, ok bool) bool {
	switch p.Type {
	case TypeBool:
		want, err := ParseBool(p.Value)
		if !ok {
			return err == nil && !want
		}
		got, err2 := ParseBool(have)
		return err == nil && err2 == nil && want == got
	case TypeStringArray:
		if !ok {
			return false
		}
		elems := SplitArray(have)
		for _, w := range SplitArray(p.Value) {
			if !slices.Contains(elems, w) {
				return false
			}
		}
		return true
	case TypeLong, TypeFloat, TypeSize, TypeDuration:
		if !ok {
			return false
		}
		x, okx := numberAs(p.Type, p.Value)
		y, oky := numberAs(p.Type, have)
		return okx && oky && x == y
	}
	return ok && strings.EqualFold(have, p.Value)
}
