package schedpriv

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The federal holidays as the US Office of Personnel Management lists
// them for years with every kind of weekend shift.
func TestUSHolidays(t *testing.T) {
	t.Parallel()
	tests := map[int]string{
		// Juneteenth, Independence Day and Christmas on weekends; the New
		// Year's Day of 2022 (a Saturday) observed on December 31.
		2021: "Jan 1,Jan 18,Feb 15,May 31,Jun 18,Jul 5,Sep 6,Oct 11,Nov 11,Nov 25,Dec 24,Dec 31",
		// Its own January 1 was observed in 2021.
		2022: "Jan 17,Feb 21,May 30,Jun 20,Jul 4,Sep 5,Oct 10,Nov 11,Nov 24,Dec 26",
		2023: "Jan 2,Jan 16,Feb 20,May 29,Jun 19,Jul 4,Sep 4,Oct 9,Nov 10,Nov 23,Dec 25",
		// Before Juneteenth became a federal holiday.
		2020: "Jan 1,Jan 20,Feb 17,May 25,Jul 3,Sep 7,Oct 12,Nov 11,Nov 26,Dec 25",
	}
	for year, want := range tests {
		var got []string
		for _, h := range USHolidays(year) {
			got = append(got, h.Date.Format("Jan 2"))
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%d:\n got %s\nwant %s", year, strings.Join(got, ","), want)
		}
	}
}

// The guide's sample file (the fixture) lists the holidays of 1999; the
// generator gives the same days but for two: the sample's Memorial Day
// (May 29) was a Saturday in 1999 (the holiday was Monday May 31), and
// the New Year's Day of 2000, a Saturday, was observed on December 31.
func TestDefaultHolidaysAgainstTheSample(t *testing.T) {
	t.Parallel()
	data, err := DefaultHolidays(1999)
	if err != nil {
		t.Fatal(err)
	}
	gen := parseHolidaysString(t, string(data))
	sample, err := ParseHolidays(openFixture(t, "holidays"), "holidays")
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(sample.Holidays)
	want[slices.Index(want, 149)] = 151
	want = append(want, 365)
	if !slices.Equal(gen.Holidays, want) {
		t.Errorf("1999 holidays %v, want %v", gen.Holidays, want)
	}
	if gen.Days[time.Saturday] != sample.Days[time.Saturday] || gen.Days[time.Sunday] != sample.Days[time.Sunday] {
		t.Error("weekends should be non-prime as in the sample")
	}
}

// For every year the file parses without a warning, for that year, with
// prime time 04:00-17:30 on weekdays, and holidays on weekdays only (a
// weekend is non-prime anyway), each with its date and name.
func TestDefaultHolidaysEveryYear(t *testing.T) {
	t.Parallel()
	for year := 1950; year <= 2150; year++ {
		data, err := DefaultHolidays(year)
		if err != nil {
			t.Fatal(err)
		}
		h, err := ParseHolidays(bytes.NewReader(data), "holidays")
		if err != nil {
			t.Fatalf("%d: %v", year, err)
		}
		if len(h.Warnings) != 0 || h.Year != year {
			t.Fatalf("%d: year %d, warnings %v", year, h.Year, h.Warnings)
		}
		// Nine in a year whose January 1 was observed the year before,
		// twelve with Juneteenth and next year's January 1.
		if n := len(h.Holidays); n < 9 || n > 12 {
			t.Errorf("%d: %d holidays", year, n)
		}
		week := DayRule{Prime: Start{Kind: StartAt, Minute: 4 * 60}, NonPrime: Start{Kind: StartAt, Minute: 17*60 + 30}}
		weekend := DayRule{Prime: Start{Kind: StartNone}, NonPrime: Start{Kind: StartAll}}
		for d, r := range h.Days {
			want := week
			if d == int(time.Saturday) || d == int(time.Sunday) {
				want = weekend
			}
			if r != want {
				t.Fatalf("%d: %v row %+v", year, time.Weekday(d), r)
			}
		}
		for _, hd := range USHolidays(year) {
			if wd := hd.Date.Weekday(); wd == time.Saturday || wd == time.Sunday {
				t.Errorf("%d: %s observed on a %v", year, hd.Name, wd)
			}
			line := strings.Join([]string{strconv.Itoa(hd.YearDay()), hd.Date.Format("Jan 2"), hd.Name}, "\t\t")
			if !bytes.Contains(data, []byte("\n"+line+"\n")) {
				t.Errorf("%d: no line %q", year, line)
			}
			if !h.IsHoliday(hd.Date) || h.IsPrime(hd.Date.Add(12*time.Hour)) {
				t.Errorf("%d: %s is not a non-prime holiday", year, hd.Name)
			}
		}
	}
}
