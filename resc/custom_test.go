package resc

import "testing"

func TestNewCustom(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, typ, flags string
		ok               bool
	}{
		{"ngpus_x", "long", "nh", true},
		{"Qlist", "string_array", "h", true},
		{"licenses", "long", "q", true},
		{"scratch", "size", "fh", true},
		{"fast", "boolean", "h", true},
		{"speed", "float", "", true},
		{"site", "string", "mir", true},
		{"ncpus", "long", "nh", false},     // built-in
		{"ngpus", "long", "nh", true},      // built-in here, a site's own in OpenPBS
		{"ngpus", "float", "nh", false},    // but only as the built-in's type
		{"ngpus", "long", "q", false},      // and host-level
		{"1abc", "long", "", false},        // bad name
		{"x", "duration", "", false},       // not a custom type
		{"x", "long", "n", false},          // n needs h
		{"x", "long", "fnh", false},        // n excludes f
		{"x", "boolean", "nh", false},      // a boolean is not consumed
		{"x", "string_array", "q", false},  // nor a string_array
		{"x", "long", "hx", false},         // unknown flag
		{"x", "long", "hh", false},         // flag twice
		{"x", "Long", "", false},           // OpenPBS's spelling only
		{"x", "string_array", "nh", false}, // not consumable
		{"x", "size", "qnh", true},         // both levels
		{"x", "float", "fh", true},         // first vnode
		{"x", "string", "h", true},         // host property
		{"x", "long", "", true},            // no flags
		{"x", "boolean", "q", false},       // not consumable
		{"x", "size", "f", false},          // f needs h
		{"x", "string", "N", false},        // letters are lower case
		{"x", "long", "mnh", true},         // sent to moms
		{"x", "long", "ri", true},          // not refused here (unchecked against OpenPBS)
		{"x", "", "", false},               // empty type
		{"x", "long", " ", false},          // a blank is no flag
		{"x", "string_array", "hm", true},  // host list to moms
		{"x", "long", "nhq", true},         // order does not matter
		{"x", "size", "hqf", true},         // f with q
		{"x", "float", "q", true},          // server/queue amount
		{"x", "boolean", "", true},         // server-level boolean
		{"x", "string", "q", false},        // not consumable
		{"x", "long", "nf", false},         // both wrong
		{"x", "long", "nhr", true},         // read-only amount
		{"x", "long", "nhi", true},         // invisible amount
		{"x", "string_array", "", true},    // plain list
		{"x", "boolean", "hf", false},      // not consumable
		{"x", "size", "nh", true},          // per-host size
		{"x", "long", "q,n", false},        // no separators
		{"x", "string_array", "r", true},   // read-only list
		{"x", "long", "h", true},           // host-level, not consumed
		{"x", "float", "nhf", false},       // n excludes f
		{"x", "size", "", true},            // plain size
		{"x", "long", "qq", false},         // twice
		{"x", "string", "", true},          // the OpenPBS default
		{"x", "long", "mq", true},          // sent to moms
		{"x", "boolean", "hm", true},       // host property to moms
	} {
		typ, terr := ParseTypeName(c.typ)
		flags, ferr := ParseFlags(c.flags)
		var err error
		switch {
		case terr != nil:
			err = terr
		case ferr != nil:
			err = ferr
		default:
			_, err = NewCustom(c.name, typ, flags)
		}
		if (err == nil) != c.ok {
			t.Errorf("%s type=%s flag=%q: error %v, want ok=%v", c.name, c.typ, c.flags, err, c.ok)
		}
		if err != nil {
			checkError(t, c.name, err)
		}
	}
}

func TestCustomCanonical(t *testing.T) {
	t.Parallel()
	def := func(name, typ string) Custom {
		ty, err := ParseTypeName(typ)
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCustom(name, ty, 0)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, c := range []struct {
		def      Custom
		in, want string
		refused  bool
	}{
		{def("n", "long"), " 4", "4", false},
		{def("n", "long"), "four", "", true},
		{def("n", "long"), "1.5", "", true},
		{def("f", "float"), "1.50", "1.5", false},
		{def("f", "float"), "NaN", "", true},
		{def("s", "size"), "10GB", "10gb", false},
		{def("s", "size"), "10 parsecs", "", true},
		{def("b", "boolean"), "yes", "True", false},
		{def("b", "boolean"), "maybe", "", true},
		{def("q", "string_array"), "a, b,c", "a,b,c", false},
		{def("q", "string_array"), "a,,b", "", true},
		{def("t", "string"), "any thing", "any thing", false},
		{def("t", "string"), "two\nlines", "", true},
	} {
		got, err := c.def.Canonical(c.in)
		if c.refused {
			if err == nil {
				t.Errorf("%s=%q: accepted as %q, want refused", c.def.Name, c.in, got)
				continue
			}
			var e *Error
			if !asError(err, &e) || e.Resource != c.def.Name {
				t.Errorf("%s=%q: error %v does not name the resource", c.def.Name, c.in, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s=%q: got %q, %v; want %q", c.def.Name, c.in, got, err, c.want)
		}
	}
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}

// FuzzCustom checks the definition parsers: an accepted definition's flags
// and type name read back to themselves, and a value its type accepts is
// a fixed point.
func FuzzCustom(f *testing.F) {
	for _, s := range [][3]string{{"long", "nh", "3"}, {"string_array", "h", "a,b"}, {"boolean", "", "True"}, {"size", "q", "1gb"}, {"float", "fh", "0.5"}, {"string", "mir", "x"}, {"long", "zz", ""}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, typ, flags, value string) {
		ty, err := ParseTypeName(typ)
		if err != nil {
			checkError(t, "type", err)
			return
		}
		fl, err := ParseFlags(flags)
		if err != nil {
			checkError(t, "flags", err)
			return
		}
		if again, err := ParseFlags(fl.String()); err != nil || again != fl {
			t.Fatalf("flags %q read back as %v, %v", fl.String(), again, err)
		}
		c, err := NewCustom("site_res", ty, fl)
		if err != nil {
			checkError(t, "NewCustom", err)
			return
		}
		if TypeName(c.Type) != typ {
			t.Fatalf("type %q written as %q", typ, TypeName(c.Type))
		}
		v, err := c.Canonical(value)
		if err != nil {
			checkError(t, "Canonical", err)
			return
		}
		if again, err := c.Canonical(v); err != nil || again != v {
			t.Fatalf("%s %q: canonical %q reads back as %q, %v", typ, value, v, again, err)
		}
	})
}
