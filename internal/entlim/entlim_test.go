package entlim

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func count(v string) (float64, string, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, "", fmt.Errorf("%q is not a count", v)
	}
	return float64(n), strconv.FormatInt(n, 10), nil
}

// TestParse: OpenPBS's entity-limit values, written back canonically;
// what is not one is refused, saying why.
func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want, err string
	}{
		{in: "[u:PBS_GENERIC=10]", want: "[u:PBS_GENERIC=10]"},
		{in: "[u:alice=20], [g:PBS_GENERIC=50], [o:PBS_ALL=200]", want: "[u:alice=20],[g:PBS_GENERIC=50],[o:PBS_ALL=200]"},
		{in: " [p:proj1=4] ", want: "[p:proj1=4]"},
		{in: "[o:PBS_ALL=1],[u:bob=2],[u:PBS_GENERIC=3]", want: "[u:PBS_GENERIC=3],[u:bob=2],[o:PBS_ALL=1]"},
		{in: "", err: "empty"},
		{in: "[x:bob=1]", err: "want u, g, p or o"},
		{in: "[u:bob]", err: "want name=value"},
		{in: "[u:bob=-1]", err: "not a count"},
		{in: "[o:bob=1]", err: "overall limit's name"},
		{in: "[u:PBS_ALL=1]", err: "overall limit's name"},
		{in: "[u:bob=1],[u:bob=2]", err: "given twice"},
		{in: "[u:bob=1] [u:ann=2]", err: "separated by commas"},
		{in: "[u:bob=1],", err: "no entry after it"},
		{in: "u:bob=1", err: "want an entry"},
		{in: "[u:bob=1", err: "no closing"},
		{in: "[u:=1]", err: "not an entity name"},
	} {
		l, err := Parse(tt.in, count)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q) = %v, %v; want an error with %q", tt.in, l, err, tt.err)
			}
			continue
		}
		if err != nil || l.String() != tt.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", tt.in, l, err, tt.want)
		}
	}
}

// TestLimit: a named entry wins over its kind's generic one; o has one.
func TestLimit(t *testing.T) {
	t.Parallel()
	l, err := Parse("[u:PBS_GENERIC=10],[u:alice=20],[g:grp=3],[o:PBS_ALL=100]", count)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		k    Kind
		name string
		want float64
		ok   bool
	}{
		{User, "alice", 20, true}, {User, "bob", 10, true}, {Group, "grp", 3, true}, {Group, "other", 0, false},
		{Project, "p1", 0, false}, {Overall, "", 100, true},
	} {
		e, ok := l.Limit(tt.k, tt.name)
		if ok != tt.ok || e.Value != tt.want {
			t.Errorf("Limit(%c, %q) = %v, %v; want %v, %v", tt.k, tt.name, e.Value, ok, tt.want, tt.ok)
		}
	}
}

// FuzzParse: no value crashes the parser, and what it accepts reads back
// to the same canonical text.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"[u:PBS_GENERIC=10]", "[u:alice=20], [g:PBS_GENERIC=50], [o:PBS_ALL=200]", "[p:x=1],[p:y=2]", "[", "]", ",", "[u:a=1],"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s, count)
		if err != nil {
			return
		}
		again, err := Parse(l.String(), count)
		if err != nil || again.String() != l.String() {
			t.Fatalf("%q: canonical %q reads back as %q, %v", s, l, again, err)
		}
	})
}
