package schedpriv

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"strings"
	"testing"
)

func usageEqual(a, b *UsageState) bool {
	return a.LastDecay == b.LastDecay && maps.Equal(a.Entities, b.Entities) && maps.Equal(a.Jobs, b.Jobs)
}

func TestUsageRoundTrip(t *testing.T) {
	t.Parallel()
	s := NewUsageState()
	s.LastDecay = 1700000000
	s.Entities = Usage{
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
	s.Jobs = map[string]float64{"12.server": 600, "13.server": 0.5}
	var buf bytes.Buffer
	if err := Encode(&buf, s); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if !strings.HasPrefix(text, "gopbs-usage 2\ndecayed\t1700000000\n") {
		t.Errorf("header: %q", text[:40])
	}
	// One line per entity and job plus header, decay and sum: no name
	// breaks a line.
	if got, want := strings.Count(text, "\n"), len(s.Entities)+len(s.Jobs)+3; got != want {
		t.Errorf("%d lines, want %d:\n%s", got, want, text)
	}
	if !strings.Contains(text, "e\ttab%09in%09name\t2\n") || !strings.Contains(text, "e\tpercent%2541\t5\n") || !strings.Contains(text, "j\t12.server\t600\n") {
		t.Errorf("escaping:\n%s", text)
	}
	back, err := Decode(strings.NewReader(text), "usage")
	if err != nil {
		t.Fatal(err)
	}
	if !usageEqual(s, back) {
		t.Errorf("round trip:\n%v\n%v", s, back)
	}
	// Deterministic output.
	var again bytes.Buffer
	Encode(&again, back)
	if again.String() != text {
		t.Error("Encode is not deterministic")
	}
	// Empty state.
	buf.Reset()
	Encode(&buf, NewUsageState())
	if back, err := Decode(&buf, "usage"); err != nil || !usageEqual(back, NewUsageState()) {
		t.Errorf("empty decode: %v %v", back, err)
	}
}

// Version 1 files (entities only), written by earlier releases, still read.
func TestUsageVersion1(t *testing.T) {
	t.Parallel()
	s, err := Decode(strings.NewReader("gopbs-usage 1\nalice\t10\nb%09ob\t0.5\n"), "usage")
	if err != nil || !maps.Equal(s.Entities, Usage{"alice": 10, "b\tob": 0.5}) || len(s.Jobs) != 0 {
		t.Fatalf("v1: %v, %v", s, err)
	}
	if s, err := Decode(strings.NewReader("gopbs-usage 1"), "usage"); err != nil || len(s.Entities) != 0 {
		t.Errorf("bare v1 header: %v, %v", s, err)
	}
}

func TestUsageEncodeRejects(t *testing.T) {
	t.Parallel()
	for _, u := range []Usage{{"": 1}, {"a": -1}, {"a": math.NaN()}, {"a": math.Inf(1)}} {
		if err := Encode(&bytes.Buffer{}, &UsageState{Entities: u}); err == nil {
			t.Errorf("Encode(%v) should fail", u)
		}
		if err := Encode(&bytes.Buffer{}, &UsageState{Jobs: u}); err == nil {
			t.Errorf("Encode(jobs %v) should fail", u)
		}
	}
}

// sum returns a version 2 file of the given lines with its checksum.
func sum(lines string) string {
	return lines + fmt.Sprintf("sum\t%08x\n", crc32.Checksum([]byte(lines), crcTable))
}

func TestUsageDecodeErrors(t *testing.T) {
	t.Parallel()
	good := func() string {
		var b bytes.Buffer
		Encode(&b, &UsageState{Entities: Usage{"alice": 10, "bob": 20}, Jobs: map[string]float64{"1.s": 5}})
		return b.String()
	}()
	tests := []struct {
		text string
		want string
	}{
		{"", "usage: empty file"},
		{"gopbs-usage 3\nalice\t1\n", `usage:1: usage file version "3" is not supported (this program reads versions 1 and 2)`},
		{"gopbs-usage 0\n", `usage:1: usage file version "0" is not supported`},
		{"gopbs-usage\n", "usage:1: not a gopbs usage file"},
		// The classic binary format: a 9-byte name and a native long.
		{"alice\x00\x00\x00\x00\x00\x00\x00\x10\x27\x00\x00\x00\x00\x00\x00", "usage:1: not a gopbs usage file"},
		// Version 2: truncated anywhere, or one byte changed.
		{good[:len(good)-1], "usage: truncated"},
		{good[:len(good)/2], "usage: truncated"},
		{strings.Replace(good, "alice\t10", "alice\t90", 1), "usage: damaged: checksum"},
		{strings.Replace(good, "sum\t", "sum\tzz", 1), "usage: bad checksum line"},
		{sum("gopbs-usage 2\ndecayed\t0\ne\talice 1\n"), "usage:3: want"},
		{sum("gopbs-usage 2\ndecayed\t0\ne\talice\tlots\n"), "usage:3: alice: bad value \"lots\""},
		{sum("gopbs-usage 2\ndecayed\t0\nj\t1.s\t-1\n"), "usage:3: 1.s: bad value \"-1\""},
		{sum("gopbs-usage 2\ndecayed\tyesterday\n"), "usage:2: bad decay time"},
		{sum("gopbs-usage 2\ndecayed\t0\ne\tal%zz\t1\n"), "usage:3: bad name"},
		{sum("gopbs-usage 2\ndecayed\t0\ne\talice\t1\ne\tbob\t2\ne\talice\t3\n"), "usage:5: alice is already given on line 3"},
		// Version 1 lines.
		{"gopbs-usage 1\nalice 1\n", "usage:2: want \"name<TAB>usage\""},
		{"gopbs-usage 1\nalice\tNaN\n", "usage:2: alice: bad usage \"NaN\""},
		{"gopbs-usage 1\nal\x01\t1\n", "usage:2: bad entity name"},
		{"gopbs-usage 1\nalice\t1\nbob\t2\nalice\t3\n", "usage:4: alice is already given on line 2"},
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
}
