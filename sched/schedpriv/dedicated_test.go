package schedpriv

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func parseDedicatedString(t *testing.T, text string, loc *time.Location) *Dedicated {
	t.Helper()
	d, err := ParseDedicated(strings.NewReader(text), "dedicated_time", loc)
	if err != nil {
		t.Fatalf("ParseDedicated(%q): %v", text, err)
	}
	return d
}

func TestDedicatedFixture(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("site", -5*3600)
	d, err := ParseDedicated(openFixture(t, "dedicated_time"), "dedicated_time", loc)
	if err != nil {
		t.Fatal(err)
	}
	want := []Window{
		{From: time.Date(1998, 4, 15, 12, 0, 0, 0, loc), To: time.Date(1998, 4, 15, 15, 30, 0, 0, loc)},
		{From: time.Date(1998, 4, 15, 16, 0, 0, 0, loc), To: time.Date(1998, 4, 15, 16, 40, 0, 0, loc)},
	}
	if len(d.Windows) != len(want) {
		t.Fatalf("windows %v", d.Windows)
	}
	for i, w := range want {
		got := d.Windows[i]
		if !got.From.Equal(w.From) || !got.To.Equal(w.To) || got.Line == 0 {
			t.Errorf("window %d = %v - %v (line %d), want %v - %v", i, got.From, got.To, got.Line, w.From, w.To)
		}
	}
	// Wall-clock times in the given location.
	if d.Windows[0].From.UTC().Hour() != 17 {
		t.Errorf("12:00 at UTC-5 is 17:00 UTC, got %v", d.Windows[0].From.UTC())
	}
}

func TestDedicatedYears(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line     string
		from, to time.Time
	}{
		{"04/15/1998 12:00 04/15/1998 15:30", at(1998, 4, 15, 12, 0, 0), at(1998, 4, 15, 15, 30, 0)},
		{"4/5/2030 8:05 4/5/2030 9:00", at(2030, 4, 5, 8, 5, 0), at(2030, 4, 5, 9, 0, 0)},
		{"04/15/98 12:00 04/15/98 13:00", at(1998, 4, 15, 12, 0, 0), at(1998, 4, 15, 13, 0, 0)},
		// Two-digit years at both ends alike: the classic code read an end
		// year of 05 as 1905.
		{"01/02/05 10:00 01/03/05 10:00", at(2005, 1, 2, 10, 0, 0), at(2005, 1, 3, 10, 0, 0)},
		{"12/31/99 23:00 01/01/00 01:00", at(1999, 12, 31, 23, 0, 0), at(2000, 1, 1, 1, 0, 0)},
		// The pivot: below 90 is 20xx, from 90 on 19xx.
		{"12/31/89 23:00 12/31/89 23:30", at(2089, 12, 31, 23, 0, 0), at(2089, 12, 31, 23, 30, 0)},
		{"01/01/90 00:00 01/01/90 01:00", at(1990, 1, 1, 0, 0, 0), at(1990, 1, 1, 1, 0, 0)},
		{"02/29/24 00:00 02/29/2024 23:59", at(2024, 2, 29, 0, 0, 0), at(2024, 2, 29, 23, 59, 0)},
		{"1/1/5 0:00 1/1/5 1:00", at(2005, 1, 1, 0, 0, 0), at(2005, 1, 1, 1, 0, 0)},
		{"06/01/2030 08:00 06/01/2030 09:00 # maintenance", at(2030, 6, 1, 8, 0, 0), at(2030, 6, 1, 9, 0, 0)},
		{"\t06/01/2030   08:00\t06/01/2030 09:00\r", at(2030, 6, 1, 8, 0, 0), at(2030, 6, 1, 9, 0, 0)},
	}
	for _, tt := range tests {
		d := parseDedicatedString(t, tt.line, time.UTC)
		if len(d.Windows) != 1 || !d.Windows[0].From.Equal(tt.from) || !d.Windows[0].To.Equal(tt.to) {
			t.Errorf("%q: got %v, want %v - %v", tt.line, d.Windows, tt.from, tt.to)
		}
	}
	// nil location means UTC.
	d := parseDedicatedString(t, "01/01/2030 00:00 01/01/2030 01:00", nil)
	if d.Windows[0].From.Location() != time.UTC {
		t.Errorf("location %v", d.Windows[0].From.Location())
	}
}

func TestDedicatedErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []string
	}{
		{"13/01/2030 10:00 13/01/2030 11:00", []string{"dedicated_time:1: start: bad date \"13/01/2030\": month 13 is not 1-12"}},
		{"00/01/2030 10:00 01/01/2030 11:00", []string{"dedicated_time:1: start: bad date \"00/01/2030\": month 0"}},
		{"04/31/2030 10:00 05/01/2030 11:00", []string{"dedicated_time:1: start: bad date \"04/31/2030\": day 31 is not 1-30"}},
		{"02/01/2030 10:00 02/29/2030 11:00", []string{"dedicated_time:1: end: bad date \"02/29/2030\": day 29 is not 1-28"}},
		{"02/00/2030 10:00 02/01/2030 11:00", []string{"dedicated_time:1: start: bad date \"02/00/2030\": day 0"}},
		{"02/01/2030 24:00 02/02/2030 11:00", []string{"dedicated_time:1: start: bad time \"24:00\""}},
		{"02/01/2030 10:60 02/02/2030 11:00", []string{"dedicated_time:1: start: bad time \"10:60\""}},
		{"02/01/2030 10:00 02/01/2030 10:00", []string{"dedicated_time:1: end 02/01/2030 10:00 is not after start"}},
		{"02/02/2030 10:00 02/01/2030 10:00", []string{"dedicated_time:1: end 02/01/2030 10:00 is not after start"}},
		{"02/01/203 10:00 02/02/2030 10:00", []string{"dedicated_time:1: start: bad date \"02/01/203\""}},
		{"02/01/20300 10:00 02/02/2030 10:00", []string{"dedicated_time:1: start: bad date"}},
		{"02/01/1899 10:00 02/02/2030 10:00", []string{"dedicated_time:1: start: bad date \"02/01/1899\": year 1899 is before 1900"}},
		{"2030-02-01 10:00 2030-02-02 10:00", []string{"dedicated_time:1: start: bad date \"2030-02-01\""}},
		{"02/01/2030 10 02/02/2030 10:00", []string{"dedicated_time:1: start: bad time \"10\""}},
		{"02/01/2030 10:00:00 02/02/2030 10:00", []string{"dedicated_time:1: start: bad time \"10:00:00\""}},
		{"02/01/2030 -1:00 02/02/2030 10:00", []string{"dedicated_time:1: start: bad time \"-1:00\""}},
		{"02/01/2030 10:00", []string{"dedicated_time:1: want \"MM/DD/YYYY HH:MM MM/DD/YYYY HH:MM\""}},
		{"02/01/2030 10:00 02/02/2030 10:00 more", []string{"dedicated_time:1: unexpected \"more\""}},
		{"# c\n01/01/2030 10:00 01/01/2030 12:00\n01/01/2030 11:00 01/01/2030 13:00",
			[]string{"dedicated_time:3: window overlaps the one on line 2"}},
		{"bad\n\n* comment\n01/01/2030 10:00 01/01/2030 12:00\nworse 1 2 3",
			[]string{"dedicated_time:1:", "dedicated_time:5:"}},
	}
	for _, tt := range tests {
		d, err := ParseDedicated(strings.NewReader(tt.file), "dedicated_time", time.UTC)
		if d != nil {
			t.Errorf("%q: got windows despite errors", tt.file)
		}
		wantProblems(t, err, tt.want...)
	}
}

func TestDedicatedQueries(t *testing.T) {
	t.Parallel()
	d := parseDedicatedString(t, `
06/01/2030 10:00 06/01/2030 12:00
# out of order on purpose: windows are sorted
01/01/2030 10:00 01/01/2030 12:00
01/01/2030 12:00 01/01/2030 13:00
`, time.UTC)
	if len(d.Windows) != 3 || d.Windows[0].Line != 4 || d.Windows[1].Line != 5 || d.Windows[2].Line != 2 {
		t.Fatalf("not sorted by start: %+v", d.Windows)
	}
	w0, w1, w2 := d.Windows[0], d.Windows[1], d.Windows[2]
	tests := []struct {
		name     string
		now      time.Time
		current  *Window
		next     *Window
		boundary time.Time
	}{
		{"before all", at(2029, 12, 31, 0, 0, 0), nil, &w0, w0.From},
		{"exactly at start: not yet", at(2030, 1, 1, 10, 0, 0), nil, &w0, w0.From},
		{"just inside", at(2030, 1, 1, 10, 0, 1), &w0, &w1, w0.To},
		{"exactly at end of first, start of adjacent", at(2030, 1, 1, 12, 0, 0), nil, &w1, w1.From},
		{"inside second", at(2030, 1, 1, 12, 30, 0), &w1, &w2, w1.To},
		{"exactly at end", at(2030, 1, 1, 13, 0, 0), nil, &w2, w2.From},
		{"between", at(2030, 3, 1, 0, 0, 0), nil, &w2, w2.From},
		{"inside last", at(2030, 6, 1, 11, 0, 0), &w2, nil, w2.To},
		{"after all", at(2031, 1, 1, 0, 0, 0), nil, nil, time.Time{}},
	}
	for _, tt := range tests {
		cur, ok := d.Current(tt.now)
		if (tt.current == nil) == ok || (ok && cur != *tt.current) {
			t.Errorf("%s: Current = %v, %v", tt.name, cur, ok)
		}
		next, ok := d.Next(tt.now)
		if (tt.next == nil) == ok || (ok && next != *tt.next) {
			t.Errorf("%s: Next = %v, %v", tt.name, next, ok)
		}
		b, ok := d.Boundary(tt.now)
		if ok == tt.boundary.IsZero() || !b.Equal(tt.boundary) {
			t.Errorf("%s: Boundary = %v, %v; want %v", tt.name, b, ok, tt.boundary)
		}
	}
	up := d.Upcoming(at(2030, 1, 1, 12, 0, 0))
	if len(up.Windows) != 2 || up.Windows[0] != w1 || len(d.Windows) != 3 {
		t.Errorf("Upcoming dropped the wrong windows: %v", up.Windows)
	}
	if up := d.Upcoming(at(2030, 1, 1, 11, 0, 0)); len(up.Windows) != 3 {
		t.Error("a current window is not past")
	}
	var none *Dedicated
	if _, ok := none.Current(at(2030, 1, 1, 11, 0, 0)); ok {
		t.Error("nil has no windows")
	}
	if _, ok := none.Next(at(2030, 1, 1, 11, 0, 0)); ok {
		t.Error("nil has no windows")
	}
	if len(none.Upcoming(at(2030, 1, 1, 0, 0, 0)).Windows) != 0 {
		t.Error("nil has no windows")
	}
}

func TestDedicatedFormatRoundTrip(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("site", 2*3600)
	d := parseDedicatedString(t, "04/15/98 12:00 04/15/98 15:30\n1/2/2031 0:05 1/3/2031 23:59\n", loc)
	var buf bytes.Buffer
	if err := d.Format(&buf); err != nil {
		t.Fatal(err)
	}
	if want := "04/15/1998 12:00 04/15/1998 15:30\n01/02/2031 00:05 01/03/2031 23:59\n"; buf.String() != want {
		t.Errorf("Format = %q, want %q", buf.String(), want)
	}
	back := parseDedicatedString(t, buf.String(), loc)
	for i := range d.Windows {
		if !back.Windows[i].From.Equal(d.Windows[i].From) || !back.Windows[i].To.Equal(d.Windows[i].To) {
			t.Errorf("window %d changed: %v", i, back.Windows[i])
		}
	}
}
