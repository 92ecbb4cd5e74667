// Package rrule reads the recurrence rules of standing reservations
// (pbs_rsub -r) and lists their occurrences: the subset of RFC 5545's
// RRULE that OpenPBS accepts (src/lib/Libutil/pbs_ical.c, check_rrule),
// parsed strictly.
//
// Accepted: FREQ (SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY,
// YEARLY; required), INTERVAL, exactly one of COUNT and UNTIL (OpenPBS
// refuses a rule with neither or both), BYDAY (plain days MO..SU), BYHOUR
// (0-23) and BYMONTH (1-12). Refused, as OpenPBS refuses them: BYSECOND,
// BYMINUTE, BYMONTHDAY, BYYEARDAY, BYWEEKNO, BYSETPOS, numbered BYDAY
// (1MO, -1FR), and any other part or a part given twice. UNTIL is a date
// (YYYYMMDD: that whole day), a local date-time (YYYYMMDDTHHMMSS, in the
// reservation's time zone) or a UTC one (...Z).
//
// Occurrences follow RFC 5545: the start (DTSTART) is the first and counts
// toward COUNT; the rule's BY parts expand or limit the others in the
// reservation's time zone, so a weekly 09:00 stays 09:00 across a change
// of daylight saving time. The package is pure: the caller loads the time
// zone.
package rrule

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Freq is a rule's FREQ.
type Freq uint8

// Frequencies.
const (
	Secondly Freq = iota + 1
	Minutely
	Hourly
	Daily
	Weekly
	Monthly
	Yearly
)

var freqNames = map[string]Freq{"SECONDLY": Secondly, "MINUTELY": Minutely, "HOURLY": Hourly,
	"DAILY": Daily, "WEEKLY": Weekly, "MONTHLY": Monthly, "YEARLY": Yearly}

func (f Freq) String() string {
	for n, v := range freqNames {
		if v == f {
			return n
		}
	}
	return "FREQ(" + strconv.Itoa(int(f)) + ")"
}

// MaxDuration is the longest an occurrence may last under f, as OpenPBS
// checks it (a MONTHLY occurrence at most 30 days).
func (f Freq) MaxDuration() time.Duration {
	switch f {
	case Secondly:
		return time.Second
	case Minutely:
		return time.Minute
	case Hourly:
		return time.Hour
	case Daily:
		return 24 * time.Hour
	case Weekly:
		return 7 * 24 * time.Hour
	case Monthly:
		return 30 * 24 * time.Hour
	}
	return 365 * 24 * time.Hour
}

var dayNames = map[string]time.Weekday{"SU": time.Sunday, "MO": time.Monday, "TU": time.Tuesday,
	"WE": time.Wednesday, "TH": time.Thursday, "FR": time.Friday, "SA": time.Saturday}

// Rule is a parsed recurrence rule.
type Rule struct {
	Freq     Freq
	Interval int // 1 when not given
	Count    int // 0: UNTIL bounds the rule
	ByDay    []time.Weekday
	ByHour   []int
	ByMonth  []time.Month
	// until is UNTIL as written: its date and time of day, whether it is
	// UTC, and whether it is a date alone (the whole day is included).
	until    time.Time
	untilSet bool
	untilUTC bool
	untilDay bool
	text     string
}

// Error kinds, for the caller's error codes (OpenPBS's
// PBSE_BAD_RRULE_SYNTAX and PBSE_BAD_RRULE_SYNTAX2).
var (
	// ErrSyntax is a rule that is not of the accepted subset.
	ErrSyntax = errors.New("Undefined iCalendar syntax")
	// ErrNoEnd is a rule with neither COUNT nor UNTIL, or with both.
	ErrNoEnd = errors.New("Undefined iCalendar syntax. A valid COUNT or UNTIL is required")
)

// MaxLen is the longest rule pbs_rsub takes (OpenPBS: 66 characters, what
// fits on a line of pbs_rstat -f after "reserve_rrule = ").
const MaxLen = 66

func syntax(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSyntax, fmt.Sprintf(format, args...))
}

// Parse reads a rule such as "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10". Names
// and values are case-insensitive; blanks are not allowed.
func Parse(s string) (*Rule, error) {
	if len(s) > MaxLen {
		return nil, syntax("the rule is longer than %d characters", MaxLen)
	}
	r := &Rule{Interval: 1}
	seen := map[string]bool{}
	if strings.HasPrefix(strings.ToUpper(s), "RRULE:") {
		s = s[len("RRULE:"):]
	}
	for _, part := range strings.Split(s, ";") {
		name, value, ok := strings.Cut(part, "=")
		name = strings.ToUpper(name)
		if !ok || name == "" || value == "" {
			return nil, syntax("%q is not NAME=VALUE", part)
		}
		if seen[name] {
			return nil, syntax("%s is given twice", name)
		}
		seen[name] = true
		value = strings.ToUpper(value)
		var err error
		switch name {
		case "FREQ":
			f, ok := freqNames[value]
			if !ok {
				return nil, syntax("FREQ=%s is not a frequency", value)
			}
			r.Freq = f
		case "INTERVAL":
			r.Interval, err = number(name, value, 1, 1000)
		case "COUNT":
			r.Count, err = number(name, value, 1, 100000)
		case "UNTIL":
			err = r.parseUntil(value)
		case "BYDAY":
			for _, d := range strings.Split(value, ",") {
				wd, ok := dayNames[d]
				if !ok {
					return nil, syntax("BYDAY=%s: %q is not MO, TU, WE, TH, FR, SA or SU (numbered days are not supported)", value, d)
				}
				if !slices.Contains(r.ByDay, wd) {
					r.ByDay = append(r.ByDay, wd)
				}
			}
		case "BYHOUR":
			r.ByHour, err = numbers(name, value, 0, 23)
		case "BYMONTH":
			var ms []int
			ms, err = numbers(name, value, 1, 12)
			for _, m := range ms {
				r.ByMonth = append(r.ByMonth, time.Month(m))
			}
		case "BYSECOND", "BYMINUTE", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYSETPOS", "WKST":
			return nil, syntax("%s is not supported", name)
		default:
			return nil, syntax("%s is not a recurrence rule part", name)
		}
		if err != nil {
			return nil, err
		}
	}
	if r.Freq == 0 {
		return nil, syntax("FREQ is required")
	}
	if (r.Count == 0) == !r.untilSet {
		return nil, ErrNoEnd
	}
	slices.Sort(r.ByDay)
	slices.Sort(r.ByHour)
	slices.Sort(r.ByMonth)
	r.text = s
	return r, nil
}

func number(name, v string, lo, hi int) (int, error) {
	if v == "" || len(v) > 6 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, syntax("%s=%s is not a whole number", name, v)
	}
	n, _ := strconv.Atoi(v)
	if n < lo || n > hi {
		return 0, syntax("%s=%s is out of range %d-%d", name, v, lo, hi)
	}
	return n, nil
}

// numbers reads a BY part's comma list of whole numbers, each once.
func numbers(name, value string, lo, hi int) ([]int, error) {
	var out []int
	for _, v := range strings.Split(value, ",") {
		n, err := number(name, v, lo, hi)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func (r *Rule) parseUntil(v string) error {
	r.untilSet = true
	layout := "20060102T150405"
	switch {
	case len(v) == 8:
		layout, r.untilDay = "20060102", true
	case len(v) == 16 && v[15] == 'Z':
		v, r.untilUTC = v[:15], true
	}
	t, err := time.Parse(layout, v)
	if err != nil || strings.ContainsAny(v, "+-") {
		return syntax("UNTIL=%s is not YYYYMMDD, YYYYMMDDTHHMMSS or YYYYMMDDTHHMMSSZ", v)
	}
	r.until = t
	return nil
}

// String is the rule as it was given.
func (r *Rule) String() string { return r.text }

// untilIn is the last moment an occurrence may start, in loc.
func (r *Rule) untilIn(loc *time.Location) time.Time {
	u := r.until
	switch {
	case r.untilUTC:
		return u
	case r.untilDay:
		return time.Date(u.Year(), u.Month(), u.Day(), 23, 59, 59, 0, loc)
	}
	return time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), 0, loc)
}

// maxSteps bounds the periods an expansion goes through: a rule whose BY
// parts almost never match (SECONDLY limited to one hour of one month)
// ends there, instead of stepping for years.
const maxSteps = 100000

// ErrTooMany is an expansion that gives more than max occurrences.
var ErrTooMany = errors.New("too many occurrences")

// Occurrences lists the starts of the rule's occurrences from start (the
// first, in the time zone of start's Location) up to and not after limit,
// at most max of them (more is ErrTooMany). None starts before start.
func (r *Rule) Occurrences(start, limit time.Time, max int) ([]time.Time, error) {
	loc := start.Location()
	start = start.Truncate(time.Second)
	end := limit
	if r.untilSet {
		if u := r.untilIn(loc); u.Before(end) {
			end = u
		}
	}
	out := []time.Time{start}
	if start.After(end) {
		return nil, nil
	}
	want := r.Count
	for step := 0; step < maxSteps; step++ {
		if want > 0 && len(out) >= want {
			break
		}
		period := r.period(start, step*r.Interval)
		first := period
		if r.Freq >= Daily {
			// Its BY parts may give moments before period in the same
			// day, week, month or year.
			first = periodStart(period, r.Freq)
		}
		if first.After(end) {
			break
		}
		for _, t := range r.expand(start, period) {
			if !t.After(start) || t.After(end) {
				continue
			}
			if want > 0 && len(out) >= want {
				break
			}
			if len(out) >= max {
				return nil, fmt.Errorf("%w: more than %d", ErrTooMany, max)
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// period is the moment n periods of the rule's frequency after start's,
// in start's zone (its wall clock kept for days and longer).
func (r *Rule) period(start time.Time, n int) time.Time {
	y, m, d := start.Date()
	h, mi, s := start.Clock()
	loc := start.Location()
	switch r.Freq {
	case Secondly:
		return start.Add(time.Duration(n) * time.Second)
	case Minutely:
		return start.Add(time.Duration(n) * time.Minute)
	case Hourly:
		return start.Add(time.Duration(n) * time.Hour)
	case Daily:
		return time.Date(y, m, d+n, h, mi, s, 0, loc)
	case Weekly:
		return time.Date(y, m, d+7*n, h, mi, s, 0, loc)
	case Monthly:
		// The first of the month n months on: the day is set per
		// occurrence (a 31st skips the months without one).
		return time.Date(y, m+time.Month(n), 1, h, mi, s, 0, loc)
	}
	return time.Date(y+n, m, 1, h, mi, s, 0, loc)
}

// periodStart is the first moment of the day, week, month or year of t.
func periodStart(t time.Time, f Freq) time.Time {
	y, m, d := t.Date()
	switch f {
	case Daily:
		return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
	case Weekly:
		back := (int(t.Weekday()) + 6) % 7 // weeks start on Monday (WKST=MO)
		return time.Date(y, m, d-back, 0, 0, 0, 0, t.Location())
	case Monthly:
		return time.Date(y, m, 1, 0, 0, 0, 0, t.Location())
	}
	return time.Date(y, 1, 1, 0, 0, 0, 0, t.Location())
}

// expand lists the candidate occurrences of the period at p, in order.
func (r *Rule) expand(start, p time.Time) []time.Time {
	loc := start.Location()
	_, mi, s := start.Clock()
	hours := r.ByHour
	if len(hours) == 0 {
		hours = []int{start.Hour()}
	}
	// days are the dates the period gives before the hours are set.
	var days []time.Time
	switch r.Freq {
	case Secondly, Minutely, Hourly:
		if r.limited(p, true) {
			return []time.Time{p}
		}
		return nil
	case Daily:
		days = []time.Time{p}
	case Weekly:
		if len(r.ByDay) == 0 {
			days = []time.Time{p}
		} else {
			first := periodStart(p, Weekly)
			for k := 0; k < 7; k++ {
				d := time.Date(first.Year(), first.Month(), first.Day()+k, 0, 0, 0, 0, loc)
				if slices.Contains(r.ByDay, d.Weekday()) {
					days = append(days, d)
				}
			}
		}
	case Monthly:
		days = r.monthDays(start, p.Year(), p.Month())
	case Yearly:
		months := r.ByMonth
		if len(months) == 0 {
			if len(r.ByDay) > 0 {
				months = []time.Month{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
			} else {
				months = []time.Month{start.Month()}
			}
		}
		for _, m := range months {
			days = append(days, r.monthDays(start, p.Year(), m)...)
		}
	}
	var out []time.Time
	for _, d := range days {
		if !r.limited(d, false) {
			continue
		}
		for _, h := range hours {
			t := time.Date(d.Year(), d.Month(), d.Day(), h, mi, s, 0, loc)
			if t.Day() == d.Day() { // an hour skipped by a clock change stays in its day
				out = append(out, t)
			}
		}
	}
	return out
}

// monthDays are the days of month m of year y the rule gives: its BYDAY
// days, else start's day of the month when the month has it.
func (r *Rule) monthDays(start time.Time, y int, m time.Month) []time.Time {
	loc := start.Location()
	var out []time.Time
	if len(r.ByDay) == 0 {
		d := time.Date(y, m, start.Day(), 0, 0, 0, 0, loc)
		if d.Month() == m {
			out = append(out, d)
		}
		return out
	}
	for d := time.Date(y, m, 1, 0, 0, 0, 0, loc); d.Month() == m; d = time.Date(y, m, d.Day()+1, 0, 0, 0, 0, loc) {
		if slices.Contains(r.ByDay, d.Weekday()) {
			out = append(out, d)
		}
	}
	return out
}

// limited reports whether t passes the BY parts that limit at the rule's
// frequency: BYMONTH always, BYDAY for DAILY and shorter, BYHOUR (when
// hours says so) for HOURLY and shorter.
func (r *Rule) limited(t time.Time, hours bool) bool {
	if len(r.ByMonth) > 0 && !slices.Contains(r.ByMonth, t.Month()) {
		return false
	}
	if r.Freq <= Daily && len(r.ByDay) > 0 && !slices.Contains(r.ByDay, t.Weekday()) {
		return false
	}
	if hours && len(r.ByHour) > 0 && !slices.Contains(r.ByHour, t.Hour()) {
		return false
	}
	return true
}
