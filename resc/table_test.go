package resc

import "testing"

func siteTable(t *testing.T) *Table {
	t.Helper()
	var cs []Custom
	for _, d := range []struct {
		name  string
		typ   Type
		flags string
	}{
		{"scratch", TypeSize, "nh"},
		{"Qlist", TypeStringArray, "h"},
		{"bigmem", TypeBool, "h"},
		{"speed", TypeFloat, "h"},
		{"licenses", TypeLong, "q"},
		{"site", TypeString, ""},
	} {
		f, err := ParseFlags(d.flags)
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCustom(d.name, d.typ, f)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	return NewTable(cs)
}

// TestTableSelect: a site's resources in a select are read as their
// types: a consumable size is an amount in bytes, a string_array, a
// boolean and an unconsumed float are properties matched as their type;
// a value that is not of its type is refused naming the resource, and a
// resource that is not host-level cannot be in a select.
func TestTableSelect(t *testing.T) {
	t.Parallel()
	tab := siteTable(t)
	sel, err := tab.ParseSelect("2:ncpus=1:scratch=10GB:Qlist=b:bigmem=false:speed=2.50")
	if err != nil {
		t.Fatal(err)
	}
	c := sel[0]
	if c.Amounts["scratch"] != 10<<30 {
		t.Errorf("scratch amount = %v, want %d bytes", c.Amounts["scratch"], 10<<30)
	}
	if v, _ := c.Get("scratch"); v != "10gb" {
		t.Errorf("scratch stored as %q, want 10gb", v)
	}
	types := map[string]Type{}
	for _, p := range c.Props {
		types[p.Name] = p.Type
	}
	if types["Qlist"] != TypeStringArray || types["bigmem"] != TypeBool || types["speed"] != TypeFloat {
		t.Errorf("props typed %v", types)
	}
	if b, _ := c.Get("bigmem"); b != "False" {
		t.Errorf("bigmem stored as %q, want False", b)
	}
	if got := c.With("mem", "1gb"); got.Amounts["scratch"] != 10<<30 {
		t.Errorf("With lost the table: scratch amount %v", got.Amounts["scratch"])
	}
	// The built-ins alone read the same select as strings.
	if sel, err := ParseSelect("1:scratch=10GB"); err != nil || len(sel[0].Props) != 1 {
		t.Errorf("untyped: %+v, %v", sel, err)
	}
	for _, bad := range []struct{ sel, want string }{
		{"1:scratch=lots", `scratch="lots": size must start with a number`},
		{"1:bigmem=maybe", `bigmem="maybe": not a boolean (want True or False)`},
		{"1:speed=fast", `speed="fast": not a number`},
		{"1:licenses=2", `"1:licenses=2": resource licenses is not a host-level resource and cannot be in a select`},
	} {
		_, err := tab.ParseSelect(bad.sel)
		if err == nil || err.Error() != bad.want {
			t.Errorf("%s: %v, want %s", bad.sel, err, bad.want)
		}
	}
}

// TestPropMatches: OpenPBS's matching of non-consumable values.
func TestPropMatches(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ  Type
		want string
		have string
		ok   bool
		out  bool
	}{
		{TypeStringArray, "b", "a,b,c", true, true},
		{TypeStringArray, "d", "a,b,c", true, false},
		{TypeStringArray, "a,c", "a, b, c", true, true},
		{TypeStringArray, "b", "", false, false},
		{TypeStringArray, "b", "abc", true, false}, // an element, not a substring
		{TypeBool, "True", "True", true, true},
		{TypeBool, "False", "", false, true}, // unset is False
		{TypeBool, "True", "", false, false},
		{TypeBool, "False", "True", true, false},
		{TypeFloat, "2.5", "2.50", true, true},
		{TypeFloat, "2.5", "3", true, false},
		{TypeSize, "1gb", "1024mb", true, true},
		{TypeString, "Linux", "linux", true, true},
		{TypeString, "linux", "", false, false},
	} {
		p := Prop{Pair: Pair{"r", c.want}, Type: c.typ}
		if got := p.Matches(c.have, c.ok); got != c.out {
			t.Errorf("%v %q against %q (set %v): %v, want %v", c.typ, c.want, c.have, c.ok, got, c.out)
		}
	}
}

// TestTableCompare: values compared as their type.
func TestTableCompare(t *testing.T) {
	t.Parallel()
	tab := siteTable(t)
	for _, c := range []struct {
		name, a, b string
		cmp        int
		ordered    bool
	}{
		{"scratch", "1gb", "1024mb", 0, true},
		{"scratch", "2gb", "1024mb", 1, true},
		{"bigmem", "true", "True", 0, false},
		{"bigmem", "1", "False", 1, false},
		{"Qlist", "a,b", "b,a", 0, false},
		{"Qlist", "a", "a,b", 1, false},
		{"speed", "1.5", "10", -1, true},
		{"site", "Here", "here", 0, false},
	} {
		cmp, ordered := tab.Compare(c.name, c.a, c.b)
		if cmp != c.cmp || ordered != c.ordered {
			t.Errorf("%s %q vs %q: %d %v, want %d %v", c.name, c.a, c.b, cmp, ordered, c.cmp, c.ordered)
		}
	}
	if !tab.Consumable("licenses") || tab.Consumable("Qlist") || !tab.Consumable("scratch") {
		t.Error("consumable: licenses and scratch are, Qlist is not")
	}
	if tab.Lookup("licenses").Chunk || !tab.Lookup("Qlist").Chunk {
		t.Error("host-level: Qlist is, licenses is not")
	}
	if w := tab.Without("scratch"); w.Consumable("scratch") || !tab.Consumable("scratch") {
		t.Error("Without changed the table it was made from, or kept the resource")
	}
}
