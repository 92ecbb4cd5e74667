package resc

import (
	"errors"
	"reflect"
	"testing"
)

// checkError fails unless err is a *Error with a reason and a message.
func checkError(t *testing.T, what string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Reason == "" || err.Error() == "" {
		t.Fatalf("%s: error %#v has no reason", what, err)
	}
}

// FuzzSize checks the size parser beyond FuzzCanonical's fixed points: an
// accepted size is a non-negative number of bytes that FormatSize writes
// back exactly, and the canonical spelling keeps the amount.
func FuzzSize(f *testing.F) {
	for _, s := range []string{"1gb", "27GB", " 100 ", "2w", "3kw", "8388607tb", "9223372036854775807b", "9223372036854775808", "1pw", "0", "12x", "mb", "-1kb", "007mb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			checkError(t, "ParseSize("+s+")", err)
			if _, err := Canonical("mem", s); err == nil {
				t.Fatalf("ParseSize refuses %q but Canonical(mem) accepts it", s)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Fatalf("ParseSize(%q) = %d, written %q, read back as %d, %v", s, n, FormatSize(n), back, err)
		}
		canon, err := Canonical("mem", s)
		if err != nil {
			t.Fatalf("ParseSize accepts %q but Canonical(mem) refuses it: %v", s, err)
		}
		if back, err := ParseSize(canon); err != nil || back != n {
			t.Fatalf("%q is %d bytes, its canonical %q is %d, %v", s, n, canon, back, err)
		}
		if v, ok := Number("mem", canon); !ok || v != float64(n) {
			t.Fatalf("Number(mem, %q) = %v, %v; want %d", canon, v, ok, n)
		}
	})
}

// FuzzDuration checks the duration parser: an accepted duration is a
// non-negative number of seconds that FormatDuration writes back exactly,
// and it is what Canonical stores for walltime.
func FuzzDuration(f *testing.F) {
	for _, s := range []string{"1:00:00", "90", "59.5", " 1:2:3 ", "2562047788015215:30:07", "2562047788015216:00:00", "1:60", "::", "1.x", "4:00:00:00", "-5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		secs, err := ParseDuration(s)
		if err != nil {
			checkError(t, "ParseDuration("+s+")", err)
			return
		}
		if secs < 0 {
			t.Fatalf("ParseDuration(%q) = %d", s, secs)
		}
		formatted := FormatDuration(secs)
		if back, err := ParseDuration(formatted); err != nil || back != secs {
			t.Fatalf("ParseDuration(%q) = %d, written %q, read back as %d, %v", s, secs, formatted, back, err)
		}
		if canon, err := Canonical("walltime", s); err != nil || canon != formatted {
			t.Fatalf("Canonical(walltime, %q) = %q, %v; want %q", s, canon, err, formatted)
		}
	})
}

// FuzzSpecString checks that the select, nodes and place parsers accept
// their own output and read it as the same spec; FuzzSelect checks only
// that the nodes conversion parses. Every error has a reason.
func FuzzSpecString(f *testing.F) {
	for _, s := range []string{
		"2:ncpus=1:mem=300MB+1:ngpus=2", "ncpus=4:arch=linux", "1:mem=1gb:host=n1+2:ncpus=2",
		"4:ppn=2", "nodeA:ppn=2+3:gpus=1", "2:ppn=8:fast:ib#shared", "n1+n2+n3", "1:gpus=1:gpus=2",
		"scatter:excl", "group=switch:pack", "free:shared:group=a:group=b",
		"1048576", "2:ncpus=0x10", "+", "a=b=c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if sel, err := ParseSelect(spec); err != nil {
			checkError(t, "ParseSelect", err)
		} else {
			checkSelect(t, "select "+spec, sel)
		}
		if sel, err := ParseNodes(spec); err != nil {
			checkError(t, "ParseNodes", err)
		} else {
			checkSelect(t, "nodes "+spec, sel)
		}
		if p, err := ParsePlace(spec); err != nil {
			checkError(t, "ParsePlace", err)
		} else if back, err := ParsePlace(p.String()); err != nil || back != p {
			t.Fatalf("place %q reads as %+v, written %q, read back as %+v, %v", spec, p, p.String(), back, err)
		}
	})
}

func checkSelect(t *testing.T, what string, sel Select) {
	t.Helper()
	if n := sel.NodeCount(); n < 1 || n > maxChunkCount {
		t.Fatalf("%s: %d chunks", what, n)
	}
	back, err := ParseSelect(sel.String())
	if err != nil {
		t.Fatalf("%s: written as %q, which does not parse: %v", what, sel.String(), err)
	}
	if !reflect.DeepEqual(back, sel) {
		t.Fatalf("%s: written as %q, read back as %+v, want %+v", what, sel.String(), back, sel)
	}
}

// FuzzParseRequest: any list either parses or is refused; a parsed select
// writes back to text that parses to the same typed chunks.
func FuzzParseRequest(f *testing.F) {
	f.Add("select", "2:ncpus=4:mem=1gb+1:arch=linux", "place", "scatter:excl", "walltime", "01:00:00")
	f.Add("select", "65", "place", "group=switch", "mem", "4gb")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2, n3, v3 string) {
		r, err := ParseRequest([]Pair{{n1, v1}, {n2, v2}, {n3, v3}})
		if err != nil {
			return
		}
		if r.Select == nil {
			return
		}
		again, err := ParseSelect(r.Select.String())
		if err != nil {
			t.Fatalf("select %q writes back as %q, which does not parse: %v", v1, r.Select.String(), err)
		}
		if !reflect.DeepEqual(again, r.Select) {
			t.Fatalf("select %q: %#v, written and read back %#v", r.Select.String(), r.Select, again)
		}
	})
}
