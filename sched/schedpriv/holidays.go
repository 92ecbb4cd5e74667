package schedpriv

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// StartKind says how a prime or non-prime start is given in the holidays file.
type StartKind uint8

const (
	StartUnset StartKind = iota // no row for the day
	StartAt                     // HHMM: at Start.Minute past midnight
	StartAll                    // "all": this state lasts the whole day
	StartNone                   // "none": this state does not begin that day
)

// Start is one column of a day row.
type Start struct {
	Kind   StartKind
	Minute int // minutes after midnight, 0..1439, for StartAt
}

// DayRule is one day row: when prime time starts and when non-prime time
// starts. The zero value (no row) makes the whole day prime.
type DayRule struct {
	Prime, NonPrime Start
}

// Holidays is a parsed holidays file: prime time per weekday and the
// holidays of one year. A nil *Holidays (no file) means always prime.
type Holidays struct {
	// Year is the YEAR line; 0 when there is none, which means all time is
	// prime time (as in PBS: without a year the file is not in use).
	Year int
	// Days holds the row for each day, indexed by time.Weekday. "weekday"
	// fills Monday to Friday; a monday..friday row overrides it for its day
	// wherever it appears in the file.
	Days [7]DayRule
	// Holidays are days of Year (1 = January 1), ascending and distinct.
	Holidays []int
	// Warnings are findings that did not stop the file from being used.
	Warnings []Problem

	file     string
	yearLine int
}

// dayIndex returns the time.Weekday of a day row's name (lower case), or -1.
// A switch rather than a table keeps the package free of mutable globals.
func dayIndex(name string) int {
	switch name {
	case "sunday":
		return int(time.Sunday)
	case "monday":
		return int(time.Monday)
	case "tuesday":
		return int(time.Tuesday)
	case "wednesday":
		return int(time.Wednesday)
	case "thursday":
		return int(time.Thursday)
	case "friday":
		return int(time.Friday)
	case "saturday":
		return int(time.Saturday)
	}
	return -1
}

// ParseHolidays reads a holidays file (the UNICOS 8 format of the PBS admin
// guide, with OpenPBS's monday..friday rows). name is used in messages. On
// error it returns nil and an Errors listing every problem.
//
// Lines: comments start with '*' or '#'; HOLIDAYFILE_VERSION1 is accepted
// and ignored; "YEAR yyyy"; "weekday|saturday|sunday|monday..friday P NP"
// where P and NP are HHMM (0000..2359), all or none; and holiday lines whose
// first word is the day of the year (the rest, calendar date and name, is
// free text). The old form "yyyy P NP" gives the year and the weekday row
// at once. Keywords are matched in any case.
func ParseHolidays(r io.Reader, name string) (*Holidays, error) {
	h := &Holidays{file: name}
	rep := report{file: name}
	var weekday *DayRule
	weekdayLine := 0
	var dayLine [7]int
	var days []int
	anyRow := false

	setYear := func(n, y int) {
		if h.Year != 0 && h.Year != y {
			rep.warnf(n, "year %d replaces %d given on line %d", y, h.Year, h.yearLine)
		}
		h.Year, h.yearLine = y, n
	}
	eachLine(r, &rep, func(n int, line string) {
		if isComment(line) {
			return
		}
		w := fields(line)
		key := strings.ToLower(w[0])
		switch {
		case key == "holidayfile_version1":
			return
		case key == "year":
			if len(w) < 2 {
				rep.errorf(n, "YEAR: missing year")
				return
			}
			if len(w) > 2 && !trailingComment(w[2:]) {
				rep.errorf(n, "YEAR: unexpected %q after the year", w[2])
				return
			}
			y, err := parseYear(w[1])
			if err != nil {
				rep.errorf(n, "YEAR: %v", err)
				return
			}
			setYear(n, y)
		case key == "weekday" || dayIndex(key) >= 0:
			rule, err := parseDayRule(w[1:])
			if err != nil {
				rep.errorf(n, "%s: %v", w[0], err)
				return
			}
			anyRow = true
			warnDayRule(&rep, n, w[0], rule)
			if key == "weekday" {
				if weekday != nil {
					rep.warnf(n, "weekday row replaces the one on line %d", weekdayLine)
				}
				weekday, weekdayLine = &rule, n
				return
			}
			d := dayIndex(key)
			if dayLine[d] != 0 {
				rep.warnf(n, "%s row replaces the one on line %d", key, dayLine[d])
			}
			h.Days[d], dayLine[d] = rule, n
		case isDigits(w[0]):
			v, err := strconv.Atoi(w[0])
			if err != nil {
				rep.errorf(n, "%q is not a day of the year (1-366)", w[0])
				return
			}
			if len(w[0]) == 4 && v > 366 {
				// Old header "yyyy P NP": the year and the weekday row.
				rule, err := parseDayRule(w[1:])
				if err != nil {
					rep.errorf(n, "year line %s: %v", w[0], err)
					return
				}
				anyRow = true
				warnDayRule(&rep, n, "weekday", rule)
				setYear(n, v)
				weekday, weekdayLine = &rule, n
				return
			}
			if v < 1 || v > 366 {
				rep.errorf(n, "%q is not a day of the year (1-366)", w[0])
				return
			}
			days = append(days, v)
		default:
			rep.errorf(n, "unknown line starting with %q (want YEAR, a day row or a holiday's day of the year)", w[0])
		}
	})
	if weekday != nil {
		for d := time.Monday; d <= time.Friday; d++ {
			if dayLine[d] == 0 {
				h.Days[d] = *weekday
			}
		}
	}
	slices.Sort(days)
	for i, d := range days {
		if i > 0 && d == days[i-1] {
			rep.warnf(0, "day %d is listed more than once", d)
			continue
		}
		h.Holidays = append(h.Holidays, d)
	}
	if h.Year == 0 && (anyRow || len(h.Holidays) > 0) {
		rep.warnf(0, "no YEAR line: the prime-time rows and holidays are not used and all time is prime time")
	}
	if h.Year != 0 && len(h.Holidays) > 0 && h.Holidays[len(h.Holidays)-1] == 366 && !isLeap(h.Year) {
		rep.warnf(0, "day 366 does not exist in %d", h.Year)
	}
	if err := rep.err(); err != nil {
		return nil, err
	}
	h.Warnings = rep.warnings
	return h, nil
}

func isDigits(s string) bool {
	return s != "" && strings.TrimLeft(s, "0123456789") == ""
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func parseYear(s string) (int, error) {
	if !isDigits(s) || len(s) > 4 {
		return 0, fmt.Errorf("%q is not a year", s)
	}
	y, _ := strconv.Atoi(s)
	if y < 1 {
		return 0, fmt.Errorf("%q is not a year", s)
	}
	return y, nil
}

func parseDayRule(w []string) (DayRule, error) {
	if len(w) < 2 {
		return DayRule{}, fmt.Errorf("want two columns: prime start and non-prime start (HHMM, all or none)")
	}
	if len(w) > 2 && !trailingComment(w[2:]) {
		return DayRule{}, fmt.Errorf("unexpected %q after the two columns", w[2])
	}
	p, err := parseStart(w[0])
	if err != nil {
		return DayRule{}, fmt.Errorf("prime start: %v", err)
	}
	np, err := parseStart(w[1])
	if err != nil {
		return DayRule{}, fmt.Errorf("non-prime start: %v", err)
	}
	return DayRule{Prime: p, NonPrime: np}, nil
}

// parseStart reads HHMM (one to four digits, as 600 for 06:00), all or none.
func parseStart(s string) (Start, error) {
	switch strings.ToLower(s) {
	case "all":
		return Start{Kind: StartAll}, nil
	case "none":
		return Start{Kind: StartNone}, nil
	}
	if !isDigits(s) || len(s) > 4 {
		return Start{}, fmt.Errorf("%q is not HHMM, all or none", s)
	}
	v, _ := strconv.Atoi(s)
	if v/100 > 23 || v%100 > 59 {
		return Start{}, fmt.Errorf("%q is not a time of day (0000-2359)", s)
	}
	return Start{Kind: StartAt, Minute: v/100*60 + v%100}, nil
}

// warnDayRule flags rows whose meaning is a guess: both columns all, both
// none, or both the same minute. Each is read as a whole day of prime time,
// the same reading OpenPBS gives them.
func warnDayRule(rep *report, n int, day string, r DayRule) {
	switch {
	case r.Prime.Kind == StartAll && r.NonPrime.Kind == StartAll:
		rep.warnf(n, "%s: both columns are all; taking the whole day as prime time", day)
	case r.Prime.Kind == StartNone && r.NonPrime.Kind == StartNone:
		rep.warnf(n, "%s: both columns are none; taking the whole day as prime time", day)
	case r.Prime.Kind == StartAt && r.NonPrime.Kind == StartAt && r.Prime.Minute == r.NonPrime.Minute:
		rep.warnf(n, "%s: prime and non-prime time start at the same minute; taking the whole day as prime time", day)
	}
}

// primeAt reports whether minute m (0..1439) of a day with rule r is prime.
// Each row decides every minute of its own day. A window whose non-prime
// start is earlier than its prime start crosses midnight: prime from P to
// midnight and from midnight to NP, on every day the row covers.
func (r DayRule) primeAt(m int) bool {
	p, np := r.Prime, r.NonPrime
	switch {
	case p.Kind == StartUnset && np.Kind == StartUnset:
		return true
	case p.Kind == StartAll:
		return true
	case np.Kind == StartAll:
		return false
	case p.Kind == StartNone && np.Kind == StartNone:
		return true
	case p.Kind == StartNone: // prime time never begins today
		return false
	case np.Kind == StartNone: // non-prime time never begins today
		return true
	}
	switch {
	case p.Minute < np.Minute:
		return p.Minute <= m && m < np.Minute
	case p.Minute > np.Minute:
		return m >= p.Minute || m < np.Minute
	}
	return true
}

// IsHoliday reports whether t's date (in t's location) is listed as a
// holiday. Day numbers name days of the file's YEAR only: in any other year
// no day is a holiday (YearWarning reports the stale file).
func (h *Holidays) IsHoliday(t time.Time) bool {
	if h == nil || h.Year == 0 || t.Year() != h.Year {
		return false
	}
	_, found := slices.BinarySearch(h.Holidays, t.YearDay())
	return found
}

// IsPrime reports whether t is prime time. The wall clock of t's location is
// used: pass t.In(loc) for the site's time zone. A holiday is non-prime all
// day. Prime time begins at the exact minute of its start and ends at the
// exact minute non-prime time starts (with weekday 0600 1730, 06:00 is prime
// and 17:30 is not). With no file (nil) or no YEAR, all time is prime.
func (h *Holidays) IsPrime(t time.Time) bool {
	if h == nil || h.Year == 0 {
		return true
	}
	if h.IsHoliday(t) {
		return false
	}
	return h.Days[t.Weekday()].primeAt(t.Hour()*60 + t.Minute())
}

// NextChange returns the first instant after t at which IsPrime changes,
// looking up to two years ahead; ok is false when it never changes in that
// span (no file, no YEAR, or the same state every day). Policies use it to
// keep jobs from crossing into the other state (backfill_prime).
func (h *Holidays) NextChange(t time.Time) (at time.Time, ok bool) {
	if h == nil || h.Year == 0 {
		return time.Time{}, false
	}
	cur := h.IsPrime(t)
	loc := t.Location()
	y, mo, d := t.Date()
	for i := 0; i <= 2*366; i++ {
		day := time.Date(y, mo, d+i, 0, 0, 0, 0, loc)
		cands := []time.Time{day}
		r := h.Days[day.Weekday()]
		for _, s := range []Start{r.Prime, r.NonPrime} {
			if s.Kind == StartAt {
				cands = append(cands, time.Date(y, mo, d+i, s.Minute/60, s.Minute%60, 0, 0, loc))
			}
		}
		slices.SortFunc(cands, func(a, b time.Time) int { return a.Compare(b) })
		for _, c := range cands {
			if c.After(t) && h.IsPrime(c) != cur {
				return c, true
			}
		}
	}
	return time.Time{}, false
}

// YearWarning reports a file whose YEAR is not now's year: its holidays are
// then not applied, which the admin should know. ok is false when there is
// nothing to report (no file, no YEAR, or the right year).
func (h *Holidays) YearWarning(now time.Time) (w Problem, ok bool) {
	if h == nil || h.Year == 0 || h.Year == now.Year() {
		return Problem{}, false
	}
	when := "out of date"
	if h.Year > now.Year() {
		when = "not yet in force"
	}
	return Problem{File: h.file, Line: h.yearLine,
		Msg: fmt.Sprintf("holidays are for %d but the year is %d (%s): no day is a holiday until the file is updated", h.Year, now.Year(), when)}, true
}

// Format writes h as a holidays file that ParseHolidays reads back to the
// same Year, Days and Holidays.
func (h *Holidays) Format(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if h.Year != 0 {
		fmt.Fprintf(bw, "YEAR\t%d\n", h.Year)
	}
	week := h.Days[time.Monday]
	sameWeek := week != DayRule{}
	for d := time.Tuesday; d <= time.Friday; d++ {
		sameWeek = sameWeek && h.Days[d] == week
	}
	if sameWeek {
		fmt.Fprintf(bw, "weekday\t%s\t%s\n", formatStart(week.Prime), formatStart(week.NonPrime))
	}
	for d, r := range h.Days {
		wd := time.Weekday(d)
		if r == (DayRule{}) || (sameWeek && wd >= time.Monday && wd <= time.Friday) {
			continue
		}
		fmt.Fprintf(bw, "%s\t%s\t%s\n", strings.ToLower(wd.String()), formatStart(r.Prime), formatStart(r.NonPrime))
	}
	for _, d := range h.Holidays {
		fmt.Fprintf(bw, "%d\n", d)
	}
	return bw.Flush()
}

func formatStart(s Start) string {
	switch s.Kind {
	case StartAll:
		return "all"
	case StartNone:
		return "none"
	case StartAt:
		return fmt.Sprintf("%02d%02d", s.Minute/60, s.Minute%60)
	}
	// A half-set rule cannot come from ParseHolidays; write something it
	// rejects rather than a silently different rule.
	return "unset"
}
