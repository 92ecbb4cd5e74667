package schedpriv

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func parseHolidaysString(t *testing.T, text string) *Holidays {
	t.Helper()
	h, err := ParseHolidays(strings.NewReader(text), "holidays")
	if err != nil {
		t.Fatalf("ParseHolidays(%q): %v", text, err)
	}
	return h
}

func at(y int, m time.Month, d, hh, mm, ss int) time.Time {
	return time.Date(y, m, d, hh, mm, ss, 0, time.UTC)
}

func TestHolidaysFixture(t *testing.T) {
	t.Parallel()
	h, err := ParseHolidays(openFixture(t, "holidays"), "holidays")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) != 0 {
		t.Errorf("warnings: %v", h.Warnings)
	}
	if h.Year != 1999 {
		t.Errorf("Year = %d", h.Year)
	}
	if want := []int{1, 18, 46, 149, 186, 249, 284, 315, 329, 358}; !slices.Equal(h.Holidays, want) {
		t.Errorf("Holidays = %v, want %v", h.Holidays, want)
	}
	// Check the calendar the table below relies on.
	for _, c := range []struct {
		t  time.Time
		wd time.Weekday
	}{
		{at(1999, 1, 1, 0, 0, 0), time.Friday}, {at(1999, 1, 18, 0, 0, 0), time.Monday},
		{at(1999, 1, 19, 0, 0, 0), time.Tuesday}, {at(1999, 1, 23, 0, 0, 0), time.Saturday},
		{at(1999, 2, 15, 0, 0, 0), time.Monday}, {at(1999, 12, 24, 0, 0, 0), time.Friday},
	} {
		if c.t.Weekday() != c.wd {
			t.Fatalf("%v is a %v", c.t, c.t.Weekday())
		}
	}
	tests := []struct {
		name  string
		t     time.Time
		prime bool
	}{
		{"tuesday before start", at(1999, 1, 19, 5, 59, 59), false},
		{"tuesday start minute", at(1999, 1, 19, 6, 0, 0), true},
		{"tuesday within start minute", at(1999, 1, 19, 6, 0, 59), true},
		{"tuesday noon", at(1999, 1, 19, 12, 0, 0), true},
		{"tuesday last prime second", at(1999, 1, 19, 17, 29, 59), true},
		{"tuesday non-prime start minute", at(1999, 1, 19, 17, 30, 0), false},
		{"tuesday midnight", at(1999, 1, 19, 0, 0, 0), false},
		{"tuesday late", at(1999, 1, 19, 23, 59, 59), false},
		{"saturday none all", at(1999, 1, 23, 12, 0, 0), false},
		{"sunday none all", at(1999, 1, 24, 10, 0, 0), false},
		{"new year (friday) morning", at(1999, 1, 1, 6, 0, 0), false},
		{"new year noon", at(1999, 1, 1, 12, 0, 0), false},
		{"MLK day at start", at(1999, 1, 18, 6, 0, 0), false},
		{"MLK day afternoon", at(1999, 1, 18, 15, 0, 0), false},
		{"day after MLK", at(1999, 1, 19, 15, 0, 0), true},
		{"presidents day", at(1999, 2, 15, 12, 0, 0), false},
		{"christmas (day 358)", at(1999, 12, 24, 12, 0, 0), false},
		{"day before christmas holiday", at(1999, 12, 23, 12, 0, 0), true},
		{"2000: 1999's day 18 is no holiday", at(2000, 1, 18, 12, 0, 0), true},
		{"2000: weekday rule still applies", at(2000, 1, 18, 18, 0, 0), false},
	}
	for _, tt := range tests {
		// Twice: a holiday stays non-prime on every cycle of the day, not
		// only the first one as in the classic scheduler.
		for range 2 {
			if got := h.IsPrime(tt.t); got != tt.prime {
				t.Errorf("%s: IsPrime(%v) = %v, want %v", tt.name, tt.t, got, tt.prime)
			}
		}
	}
	if !h.IsHoliday(at(1999, 7, 5, 3, 0, 0)) || h.IsHoliday(at(1999, 7, 4, 3, 0, 0)) {
		t.Error("IsHoliday wrong around day 186 (Jul 5 1999)")
	}

	// The local date decides: 10:00 on Tuesday 19 January at UTC+12 is
	// 22:00 on Monday 18 January (a holiday) in UTC.
	east := time.FixedZone("UTC+12", 12*3600)
	local := time.Date(1999, 1, 19, 10, 0, 0, 0, east)
	if !h.IsPrime(local) || h.IsPrime(local.UTC()) {
		t.Errorf("IsPrime should use t's location: local %v, UTC %v", h.IsPrime(local), h.IsPrime(local.UTC()))
	}

	if _, ok := h.YearWarning(at(1999, 6, 1, 0, 0, 0)); ok {
		t.Error("no warning expected in 1999")
	}
	w, ok := h.YearWarning(at(2025, 6, 1, 0, 0, 0))
	if !ok || w.File != "holidays" || w.Line != 81 || !strings.Contains(w.Msg, "1999") || !strings.Contains(w.Msg, "out of date") {
		t.Errorf("YearWarning = %v, %v", w, ok)
	}
	if w, ok := h.YearWarning(at(1998, 6, 1, 0, 0, 0)); !ok || !strings.Contains(w.Msg, "not yet") {
		t.Errorf("YearWarning(1998) = %v, %v", w, ok)
	}
}

func TestIsPrimeRules(t *testing.T) {
	t.Parallel()
	tue := func(hh, mm int) time.Time { return at(2030, 1, 1, hh, mm, 0) } // a Tuesday
	sat := func(hh, mm int) time.Time { return at(2030, 1, 5, hh, mm, 0) }
	mon := func(hh, mm int) time.Time { return at(2030, 1, 7, hh, mm, 0) }
	if tue(0, 0).Weekday() != time.Tuesday || sat(0, 0).Weekday() != time.Saturday || mon(0, 0).Weekday() != time.Monday {
		t.Fatal("calendar")
	}
	tests := []struct {
		name  string
		file  string
		t     time.Time
		prime bool
	}{
		// The classic code made this always non-prime; it means always prime.
		{"weekday all none", "YEAR 2030\nweekday all none", tue(3, 0), true},
		{"weekday all none noon", "YEAR 2030\nweekday all none", tue(12, 0), true},
		{"weekday all none late", "YEAR 2030\nweekday all none", tue(23, 59), true},
		{"saturday none all", "YEAR 2030\nsaturday none all", sat(12, 0), false},
		{"ALL and NONE any case", "YEAR 2030\nSaturday NONE All", sat(12, 0), false},
		{"no row for the day: all prime", "YEAR 2030\nweekday 0600 1730", sat(3, 0), true},
		{"prime never starts", "YEAR 2030\nweekday none 1730", tue(12, 0), false},
		{"non-prime never starts", "YEAR 2030\nweekday 0600 none", tue(3, 0), true},
		{"both none", "YEAR 2030\nweekday none none", tue(3, 0), true},
		{"same minute", "YEAR 2030\nweekday 0800 0800", tue(3, 0), true},
		{"short HHMM", "YEAR 2030\nweekday 600 1730", tue(6, 0), true},
		{"short HHMM before", "YEAR 2030\nweekday 600 1730", tue(5, 59), false},
		{"midnight start", "YEAR 2030\nweekday 0000 0100", tue(0, 0), true},
		{"midnight start end", "YEAR 2030\nweekday 0000 0100", tue(1, 0), false},
		{"prime to last minute", "YEAR 2030\nweekday 0800 2359", tue(23, 58), true},
		{"prime to last minute end", "YEAR 2030\nweekday 0800 2359", tue(23, 59), false},
		// A window crossing midnight.
		{"cross: evening before", "YEAR 2030\nweekday 1800 0600", tue(17, 59), false},
		{"cross: evening start", "YEAR 2030\nweekday 1800 0600", tue(18, 0), true},
		{"cross: before midnight", "YEAR 2030\nweekday 1800 0600", tue(23, 59), true},
		{"cross: after midnight", "YEAR 2030\nweekday 1800 0600", tue(0, 0), true},
		{"cross: last minute", "YEAR 2030\nweekday 1800 0600", tue(5, 59), true},
		{"cross: end minute", "YEAR 2030\nweekday 1800 0600", tue(6, 0), false},
		{"cross with minutes", "YEAR 2030\nweekday 2215 0145", tue(22, 14), false},
		{"cross with minutes start", "YEAR 2030\nweekday 2215 0145", tue(22, 15), true},
		{"cross with minutes end", "YEAR 2030\nweekday 2215 0145", tue(1, 45), false},
		{"cross with minutes before end", "YEAR 2030\nweekday 2215 0145", tue(1, 44), true},
		// monday..friday rows override weekday wherever they appear.
		{"monday row after weekday", "YEAR 2030\nweekday 0600 1730\nmonday 0800 1700", mon(7, 0), false},
		{"monday row before weekday", "YEAR 2030\nmonday 0800 1700\nweekday 0600 1730", mon(7, 0), false},
		{"monday row leaves tuesday", "YEAR 2030\nmonday 0800 1700\nweekday 0600 1730", tue(7, 0), true},
		{"old header", "2030 0400 1530", tue(4, 0), true},
		{"old header end", "2030 0400 1530", tue(15, 30), false},
		// No YEAR: the file is not in use.
		{"no YEAR", "weekday none all\nsaturday none all", tue(12, 0), true},
		{"holiday without YEAR", "1 New Year", at(2030, 1, 1, 12, 0, 0), true},
		{"holiday with YEAR", "YEAR 2030\nweekday all none\n1 Jan 1 New Year", at(2030, 1, 1, 12, 0, 0), false},
		{"holiday day 365", "YEAR 2030\n365 Dec 31", at(2030, 12, 31, 23, 59, 0), false},
		{"holiday: next day prime", "YEAR 2030\n365 Dec 31", at(2031, 1, 1, 0, 0, 0), true},
		{"comment after columns", "YEAR 2030 # year\nweekday 0600 1730 # office hours", tue(6, 0), true},
	}
	for _, tt := range tests {
		h := parseHolidaysString(t, tt.file)
		if got := h.IsPrime(tt.t); got != tt.prime {
			t.Errorf("%s: IsPrime(%v) = %v, want %v", tt.name, tt.t, got, tt.prime)
		}
	}
	var none *Holidays
	if !none.IsPrime(tue(3, 0)) || none.IsHoliday(tue(3, 0)) {
		t.Error("no holidays file means always prime")
	}
	if _, ok := none.YearWarning(tue(3, 0)); ok {
		t.Error("no file, no warning")
	}
}

func TestHolidaysWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want string
	}{
		{"weekday 0600 1730", "holidays: no YEAR line"},
		{"YEAR 2030\nweekday all all", "holidays:2: weekday: both columns are all"},
		{"YEAR 2030\nsunday none none", "holidays:2: sunday: both columns are none"},
		{"YEAR 2030\nweekday 0800 0800", "holidays:2: weekday: prime and non-prime time start at the same minute"},
		{"YEAR 2030\nweekday 0800 1700\nweekday 0900 1700", "holidays:3: weekday row replaces the one on line 2"},
		{"YEAR 2030\nfriday 0800 1700\nfriday 0900 1700", "holidays:3: friday row replaces the one on line 2"},
		{"YEAR 2030\nYEAR 2031", "holidays:2: year 2031 replaces 2030 given on line 1"},
		{"YEAR 2030\n5\n5", "holidays: day 5 is listed more than once"},
		{"YEAR 2030\n366", "holidays: day 366 does not exist in 2030"},
	}
	for _, tt := range tests {
		h := parseHolidaysString(t, tt.file)
		if len(h.Warnings) != 1 || !strings.HasPrefix(h.Warnings[0].String(), tt.want) {
			t.Errorf("%q: warnings %v, want %q", tt.file, h.Warnings, tt.want)
		}
	}
	if h := parseHolidaysString(t, "YEAR 2032\n366"); len(h.Warnings) != 0 {
		t.Errorf("2032 is a leap year: %v", h.Warnings)
	}
}

func TestHolidaysErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []string
	}{
		{"YEAR 2030\nweekday 0600", []string{"holidays:2: weekday: want two columns"}},
		{"weekday", []string{"holidays:1: weekday: want two columns"}},
		{"weekday 2400 1730", []string{`holidays:1: weekday: prime start: "2400" is not a time of day`}},
		{"weekday 0660 1730", []string{`holidays:1: weekday: prime start: "0660" is not a time of day`}},
		{"weekday 0600 17:30", []string{`holidays:1: weekday: non-prime start: "17:30" is not HHMM, all or none`}},
		{"saturday 6am all", []string{`holidays:1: saturday: prime start: "6am"`}},
		{"sunday 00600 all", []string{`holidays:1: sunday: prime start: "00600"`}},
		{"tuesday 0600 1730 extra", []string{`holidays:1: tuesday: unexpected "extra"`}},
		{"funday 0600 1730", []string{`holidays:1: unknown line starting with "funday"`}},
		{"YEAR", []string{"holidays:1: YEAR: missing year"}},
		{"YEAR 99x", []string{`holidays:1: YEAR: "99x" is not a year`}},
		{"YEAR 0", []string{`holidays:1: YEAR: "0" is not a year`}},
		{"YEAR 2030 2031", []string{`holidays:1: YEAR: unexpected "2031"`}},
		{"367 Jan 2 next year", []string{`holidays:1: "367" is not a day of the year`}},
		{"0 nothing", []string{`holidays:1: "0" is not a day of the year`}},
		{"12345 0600 1730", []string{`holidays:1: "12345" is not a day of the year`}},
		{"1998 0600", []string{"holidays:1: year line 1998: want two columns"}},
		// Calendar dates are not a PBS holidays format.
		{"1/1 New Year's Day", []string{`holidays:1: unknown line starting with "1/1"`}},
		{"Jan 1 New Year's Day", []string{`holidays:1: unknown line starting with "Jan"`}},
		{"YEAR x\nweekday 1 2 3\nfoo", []string{"holidays:1:", "holidays:2:", "holidays:3:"}},
	}
	for _, tt := range tests {
		h, err := ParseHolidays(strings.NewReader(tt.file), "holidays")
		if h != nil {
			t.Errorf("%q: got holidays despite errors", tt.file)
		}
		wantProblems(t, err, tt.want...)
	}
}

func TestNextChange(t *testing.T) {
	t.Parallel()
	h, err := ParseHolidays(openFixture(t, "holidays"), "holidays")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		from, want time.Time
	}{
		{at(1999, 1, 19, 10, 0, 0), at(1999, 1, 19, 17, 30, 0)},     // Tuesday prime -> evening
		{at(1999, 1, 19, 18, 0, 0), at(1999, 1, 20, 6, 0, 0)},       // Tuesday evening -> Wednesday morning
		{at(1999, 1, 19, 5, 59, 30), at(1999, 1, 19, 6, 0, 0)},      // half a minute before
		{at(1999, 1, 22, 18, 0, 0), at(1999, 1, 25, 6, 0, 0)},       // Friday evening -> Monday
		{at(1999, 1, 15, 18, 0, 0), at(1999, 1, 19, 6, 0, 0)},       // long weekend: Monday is MLK day
		{at(1999, 12, 31, 18, 0, 0), at(2000, 1, 3, 6, 0, 0)},       // into the next year (Monday)
		{at(1999, 12, 23, 17, 30, 0), at(1999, 12, 27, 6, 0, 0)},    // day 358 (Fri) holiday
		{at(1999, 12, 23, 17, 29, 59), at(1999, 12, 23, 17, 30, 0)}, // last prime second
	}
	for _, tt := range tests {
		got, ok := h.NextChange(tt.from)
		if !ok || !got.Equal(tt.want) {
			t.Errorf("NextChange(%v) = %v, %v; want %v", tt.from, got, ok, tt.want)
		}
	}
	always := parseHolidaysString(t, "YEAR 2030\nweekday all none\nsaturday all none\nsunday all none")
	if got, ok := always.NextChange(at(2030, 3, 1, 0, 0, 0)); ok {
		t.Errorf("always prime has no change, got %v", got)
	}
	var none *Holidays
	if _, ok := none.NextChange(at(2030, 3, 1, 0, 0, 0)); ok {
		t.Error("nil holidays never change")
	}
	cross := parseHolidaysString(t, "YEAR 2030\nweekday 1800 0600\nsaturday none all\nsunday none all")
	// Friday 18:00 prime runs to midnight; Saturday is non-prime all day.
	if got, ok := cross.NextChange(at(2030, 1, 4, 20, 0, 0)); !ok || !got.Equal(at(2030, 1, 5, 0, 0, 0)) {
		t.Errorf("cross midnight: NextChange = %v, %v", got, ok)
	}
}

func TestHolidaysFormatRoundTrip(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"",
		"weekday 0600 1730",
		"YEAR 2030\nweekday 0600 1730\nmonday 0800 1700\nsaturday none all\nsunday all none\n1\n359\n",
		"YEAR 2030\nfriday 1800 0600\n2030 0400 1530\n",
		"YEAR 2030\ntuesday all all\nwednesday 0000 2359\n",
	}
	for _, in := range inputs {
		checkHolidaysRoundTrip(t, parseHolidaysString(t, in))
	}
	h, err := ParseHolidays(openFixture(t, "holidays"), "holidays")
	if err != nil {
		t.Fatal(err)
	}
	checkHolidaysRoundTrip(t, h)
}

func checkHolidaysRoundTrip(t *testing.T, h *Holidays) {
	t.Helper()
	var buf bytes.Buffer
	if err := h.Format(&buf); err != nil {
		t.Fatal(err)
	}
	h2, err := ParseHolidays(bytes.NewReader(buf.Bytes()), "formatted")
	if err != nil {
		t.Fatalf("formatted holidays do not parse: %v\n%s", err, buf.String())
	}
	if h.Year != h2.Year || h.Days != h2.Days || !reflect.DeepEqual(h.Holidays, h2.Holidays) {
		t.Errorf("round trip changed the holidays:\n%+v\n%+v\n%s", h, h2, buf.String())
	}
}
