package schedpriv

import (
	"bytes"
	"maps"
	"math"
	"strings"
	"testing"
)

func TestUsageRoundTrip(t *testing.T) {
	u := Usage{
		"alice": 1,
		"a_very_long_user_name_far_beyond_eight_bytes_" + strings.Repeat("x", 300): 12345.5,
		"tab\tin\tname":     2,
		"new\nline":         3,
		"cr\rname":          4,
		"percent%41":        5,
		"space in name":     6,
		" lead and trail ":  7,
		"ünïcødé":           8,
		"\x00nul\x7fdel":    9,
		"bad utf8 \xff\xfe": 10,
		"zero":              0,
		"tiny":              1e-300,
		"huge":              1.7976931348623157e308,
		"fraction":          0.1,
	}
	var buf bytes.Buffer
	if err := Encode(&buf, u); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if !strings.HasPrefix(text, "gopbs-usage 1\n") {
		t.Errorf("header: %q", text[:20])
	}
	// One line per entity plus the header: no name breaks a line.
	if got := strings.Count(text, "\n"); got != len(u)+1 {
		t.Errorf("%d lines for %d entities:\n%s", got, len(u), text)
	}
	if !strings.Contains(text, "tab%09in%09name\t2\n") || !strings.Contains(text, "percent%2541\t5\n") {
		t.Errorf("escaping:\n%s", text)
	}
	back, err := Decode(strings.NewReader(text), "usage")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(u, back) {
		t.Errorf("round trip:\n%v\n%v", u, back)
	}
	// Deterministic output.
	var again bytes.Buffer
	Encode(&again, back)
	if again.String() != text {
		t.Error("Encode is not deterministic")
	}
	// Empty usage.
	buf.Reset()
	Encode(&buf, Usage{})
	if buf.String() != "gopbs-usage 1\n" {
		t.Errorf("empty: %q", buf.String())
	}
	if back, err := Decode(&buf, "usage"); err != nil || len(back) != 0 {
		t.Errorf("empty decode: %v %v", back, err)
	}
}

func TestUsageEncodeRejects(t *testing.T) {
	for _, u := range []Usage{{"": 1}, {"a": -1}, {"a": math.NaN()}, {"a": math.Inf(1)}} {
		if err := Encode(&bytes.Buffer{}, u); err == nil {
			t.Errorf("Encode(%v) should fail", u)
		}
	}
}

func TestUsageDecodeErrors(t *testing.T) {
	tests := []struct {
		text string
		want string
	}{
		{"", "usage: empty file"},
		{"gopbs-usage 2\nalice\t1\n", `usage:1: usage file version "2" is not supported (this program reads version 1)`},
		{"gopbs-usage 0\n", `usage:1: usage file version "0" is not supported`},
		{"gopbs-usage\n", "usage:1: not a gopbs usage file"},
		// The classic binary format: a 9-byte name and a native long.
		{"alice\x00\x00\x00\x00\x00\x00\x00\x10\x27\x00\x00\x00\x00\x00\x00", "usage:1: not a gopbs usage file"},
		{"gopbs-usage 1\nalice 1\n", "usage:2: want \"name<TAB>usage\""},
		{"gopbs-usage 1\nalice\tlots\n", "usage:2: alice: bad usage \"lots\""},
		{"gopbs-usage 1\nalice\t-1\n", "usage:2: alice: bad usage \"-1\""},
		{"gopbs-usage 1\nalice\tNaN\n", "usage:2: alice: bad usage \"NaN\""},
		{"gopbs-usage 1\nalice\t+Inf\n", "usage:2: alice: bad usage"},
		{"gopbs-usage 1\n\t1\n", "usage:2: bad entity name \"\""},
		{"gopbs-usage 1\nal%4\t1\n", "usage:2: bad entity name \"al%4\""},
		{"gopbs-usage 1\nal%zz\t1\n", "usage:2: bad entity name"},
		{"gopbs-usage 1\nal\x01\t1\n", "usage:2: bad entity name"},
		{"gopbs-usage 1\nalice\t1\nbob\t2\nalice\t3\n", "usage:4: alice is already given on line 2"},
		{"gopbs-usage 1\n\n", "usage:2: want"},
	}
	for _, tt := range tests {
		u, err := Decode(strings.NewReader(tt.text), "usage")
		if err == nil || u != nil {
			t.Errorf("Decode(%q) = %v, %v; want error", tt.text, u, err)
			continue
		}
		if _, ok := AsErrors(err); !ok {
			t.Errorf("Decode(%q) error %T is not an Errors", tt.text, err)
		}
		if !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Decode(%q) error %q, want prefix %q", tt.text, err, tt.want)
		}
	}
	// The header may lack its newline when there are no entries.
	if u, err := Decode(strings.NewReader("gopbs-usage 1"), "usage"); err != nil || len(u) != 0 {
		t.Errorf("bare header: %v, %v", u, err)
	}
}
