package rrule

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no time zone %s: %v", name, err)
	}
	return loc
}

func TestWeeklyByDayCount(t *testing.T) {
	t.Parallel()
	loc := mustLoc(t, "Europe/Stockholm")
	r, err := Parse("FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10")
	if err != nil {
		t.Fatal(err)
	}
	// Monday 9 March 2026, 08:00: daylight saving time starts on 29 March
	// and the occurrences stay at 08:00 local time.
	start := time.Date(2026, 3, 9, 8, 0, 0, 0, loc)
	occ, err := r.Occurrences(start, start.AddDate(3, 0, 0), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(occ) != 10 {
		t.Fatalf("want 10 occurrences, got %d: %v", len(occ), occ)
	}
	want := []string{"Mon 09", "Wed 11", "Mon 16", "Wed 18", "Mon 23", "Wed 25", "Mon 30", "Wed 01", "Mon 06", "Wed 08"}
	for i, o := range occ {
		if got := o.Format("Mon 02"); got != want[i] || o.Hour() != 8 {
			t.Errorf("occurrence %d: %s, want %s at 08:00", i, o.Format(time.RFC3339), want[i])
		}
	}
	if off := occ[7].Sub(occ[6]); off != 2*24*time.Hour {
		t.Errorf("across no change: %v", off)
	}
	if _, o1 := occ[5].Zone(); func() bool { _, o2 := occ[6].Zone(); return o1 == o2 }() {
		t.Errorf("occurrences 5 and 6 straddle the change of offset: %v %v", occ[5], occ[6])
	}
}

func TestStartCountsAndUntil(t *testing.T) {
	t.Parallel()
	r, err := Parse("FREQ=DAILY;UNTIL=20260105")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 22, 0, 0, 0, time.UTC)
	occ, err := r.Occurrences(start, start.AddDate(1, 0, 0), 100)
	if err != nil || len(occ) != 5 {
		t.Fatalf("daily to the 5th inclusive: %v %v", occ, err)
	}
	// A start that does not match BYDAY is still the first occurrence.
	r, _ = Parse("FREQ=WEEKLY;BYDAY=FR;COUNT=2")
	occ, _ = r.Occurrences(start, start.AddDate(1, 0, 0), 100) // a Thursday
	if len(occ) != 2 || !occ[0].Equal(start) || occ[1].Weekday() != time.Friday {
		t.Fatalf("%v", occ)
	}
	// The 3-year window and the cap.
	r, _ = Parse("FREQ=HOURLY;COUNT=5000")
	if _, err := r.Occurrences(start, start.AddDate(3, 0, 0), 1000); !errors.Is(err, ErrTooMany) {
		t.Fatalf("5000 hourly occurrences: %v", err)
	}
	r, _ = Parse("FREQ=YEARLY;COUNT=10")
	occ, _ = r.Occurrences(start, start.AddDate(3, 0, 0), 1000)
	if len(occ) != 4 {
		t.Fatalf("yearly within 3 years: %v", occ)
	}
	r, _ = Parse("FREQ=MONTHLY;COUNT=4")
	occ, _ = r.Occurrences(time.Date(2026, 1, 31, 9, 0, 0, 0, time.UTC), start.AddDate(3, 0, 0), 100)
	if len(occ) != 4 || occ[1].Month() != time.March || occ[2].Month() != time.May {
		t.Fatalf("monthly on the 31st skips short months: %v", occ)
	}
	r, _ = Parse("FREQ=DAILY;BYHOUR=9,17;COUNT=3")
	occ, _ = r.Occurrences(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC), start.AddDate(1, 0, 0), 100)
	if len(occ) != 3 || occ[1].Hour() != 17 || occ[2].Day() != 2 {
		t.Fatalf("BYHOUR: %v", occ)
	}
}

func TestRefused(t *testing.T) {
	t.Parallel()
	for rule, want := range map[string]error{
		"FREQ=WEEKLY;BYDAY=MO":                           ErrNoEnd,
		"FREQ=WEEKLY;COUNT=2;UNTIL=20300101":             ErrNoEnd,
		"BYDAY=MO;COUNT=2":                               ErrSyntax,
		"FREQ=FORTNIGHTLY;COUNT=2":                       ErrSyntax,
		"FREQ=MONTHLY;BYMONTHDAY=1;COUNT=2":              ErrSyntax,
		"FREQ=MONTHLY;BYDAY=-1FR;COUNT=2":                ErrSyntax,
		"FREQ=WEEKLY;COUNT=2;COUNT=3":                    ErrSyntax,
		"FREQ=WEEKLY;COUNT=0":                            ErrSyntax,
		"FREQ=WEEKLY;COUNT=2;BYHOUR=24":                  ErrSyntax,
		"FREQ=WEEKLY;UNTIL=2030-01-01":                   ErrSyntax,
		"FREQ=WEEKLY; COUNT=2":                           ErrSyntax,
		"FREQ=WEEKLY;COUNT=2;X-NAME=1":                   ErrSyntax,
		"FREQ=WEEKLY;COUNT=2;" + strings.Repeat("A", 70): ErrSyntax,
	} {
		if _, err := Parse(rule); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", rule, err, want)
		}
	}
}

// FuzzParse checks that any rule either is refused or expands within its
// bounds, in order, never before its start.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10", "FREQ=DAILY;UNTIL=20300101T000000Z", "FREQ=YEARLY;BYMONTH=2;BYDAY=SU;COUNT=3",
		"FREQ=SECONDLY;BYHOUR=3;BYMONTH=7;COUNT=100", "FREQ=MONTHLY;INTERVAL=2;BYDAY=FR;BYHOUR=1,2;UNTIL=20281231"} {
		f.Add(s)
	}
	start := time.Date(2026, 3, 29, 1, 30, 0, 0, time.FixedZone("X", 3600))
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrNoEnd) {
				t.Fatalf("%q: untyped error %v", s, err)
			}
			return
		}
		limit := start.AddDate(3, 0, 0)
		occ, err := r.Occurrences(start, limit, 200)
		if err != nil {
			if !errors.Is(err, ErrTooMany) {
				t.Fatal(err)
			}
			return
		}
		if r.Count > 0 && len(occ) > r.Count {
			t.Fatalf("%q: %d occurrences", s, len(occ))
		}
		for i, o := range occ {
			if o.Before(start) || o.After(limit) || i > 0 && !o.After(occ[i-1]) {
				t.Fatalf("%q: occurrence %d %v out of order or bounds", s, i, o)
			}
		}
	})
}
