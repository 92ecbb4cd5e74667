package qsubopt

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDateTime reads a -a value, [[[[CC]YY]MM]DD]hhmm[.SS], in now's
// location. Fields left out are taken from now; when the result would lie
// in the past, a time of day rolls to tomorrow, a day of the month to the
// next month that has that day, and a month and day to the next year that
// has them. A fully given date in the past is returned as it is: the job
// is then eligible at once.
func ParseDateTime(s string, now time.Time) (time.Time, error) {
	body, secs, hasSecs := strings.Cut(s, ".")
	if hasSecs && len(secs) != 2 {
		return time.Time{}, fmt.Errorf("seconds must be two digits")
	}
	switch len(body) {
	case 4, 6, 8, 10, 12:
	default:
		return time.Time{}, fmt.Errorf("want [[[[CC]YY]MM]DD]hhmm[.SS]")
	}
	for _, c := range body + secs {
		if c < '0' || c > '9' {
			return time.Time{}, fmt.Errorf("want [[[[CC]YY]MM]DD]hhmm[.SS]")
		}
	}
	// field takes the two digits k pairs from the right of body.
	field := func(k int) int {
		n, _ := strconv.Atoi(body[len(body)-2*k-2 : len(body)-2*k])
		return n
	}
	mm, hh := field(0), field(1)
	ss := 0
	if hasSecs {
		ss, _ = strconv.Atoi(secs)
	}
	if hh > 23 || mm > 59 || ss > 59 {
		return time.Time{}, fmt.Errorf("time of day out of range")
	}
	loc := now.Location()
	year, month, day := now.Date()
	n := len(body) / 2
	if n >= 3 {
		day = field(2)
		if day < 1 || day > 31 {
			return time.Time{}, fmt.Errorf("day out of range")
		}
	}
	if n >= 4 {
		m := field(3)
		if m < 1 || m > 12 {
			return time.Time{}, fmt.Errorf("month out of range")
		}
		month = time.Month(m)
	}
	switch n {
	case 5:
		// Two-digit years follow POSIX touch(1): 69-99 are 1969-1999.
		year = 2000 + field(4)
		if field(4) >= 69 {
			year = 1900 + field(4)
		}
	case 6:
		year = field(5)*100 + field(4)
	}
	at := func(y int, m time.Month, d int) (time.Time, bool) {
		t := time.Date(y, m, d, hh, mm, ss, 0, loc)
		// time.Date normalises April 31 to May 1; such a date does not exist.
		return t, t.Day() == d && t.Month() == m
	}
	switch n {
	case 2:
		t := time.Date(year, month, day, hh, mm, ss, 0, loc)
		if t.Before(now) {
			t = time.Date(year, month, day+1, hh, mm, ss, 0, loc)
		}
		return t, nil
	case 3:
		for k := 0; k < 13; k++ {
			first := time.Date(year, month+time.Month(k), 1, 0, 0, 0, 0, loc)
			if t, ok := at(first.Year(), first.Month(), day); ok && !t.Before(now) {
				return t, nil
			}
		}
		return time.Time{}, fmt.Errorf("no month has day %d", day)
	case 4:
		for k := 0; k < 9; k++ {
			if t, ok := at(year+k, month, day); ok && !t.Before(now) {
				return t, nil
			}
		}
		return time.Time{}, fmt.Errorf("no such date")
	default:
		t, ok := at(year, month, day)
		if !ok {
			return time.Time{}, fmt.Errorf("no such date")
		}
		return t, nil
	}
}

// ParseTimeAttr reads the value of a time attribute given with -W
// (hold_until, Execution_Time) and returns it as the Unix seconds the
// server stores: either Unix seconds ("0" lets a hold go) or PBS's
// datetime, [[CC]YY]MMDDhhmm[.SS], as -a takes it. A value with seconds
// (".SS") or of 8 or 12 digits is a datetime; one of 10 digits is
// YYMMDDhhmm when it reads as a date of this year or later, Unix
// seconds otherwise (today's Unix times read as no such date, or as a
// year before 2021); any other run of digits is Unix seconds.
func ParseTimeAttr(v string, now time.Time) (string, error) {
	v = strings.TrimSpace(v)
	body, _, dotted := strings.Cut(v, ".")
	digits := body != "" && strings.Trim(body, "0123456789") == ""
	if !digits {
		return "", fmt.Errorf("want [[CC]YY]MMDDhhmm[.SS] or Unix seconds")
	}
	switch {
	case dotted || len(body) == 8 || len(body) == 12:
		t, err := ParseDateTime(v, now)
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(t.Unix(), 10), nil
	case len(body) == 10:
		if t, err := ParseDateTime(v, now); err == nil && t.Year() >= now.Year() {
			return strconv.FormatInt(t.Unix(), 10), nil
		}
	}
	return v, nil
}
