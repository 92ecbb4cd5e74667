package schedpriv

import (
	"bytes"
	"fmt"
	"time"
)

// Holiday is one day of a holidays file.
type Holiday struct {
	Date time.Time // midnight UTC of the day the holiday is observed
	Name string
}

// YearDay is the holiday's day of the year (1 = January 1), the number a
// holidays file gives.
func (h Holiday) YearDay() int { return h.Date.YearDay() }

// USHolidays returns the United States federal holidays observed in year,
// in date order: the list the admin guide's sample holidays file gives,
// plus Juneteenth from 2021, when it became one. A holiday falling on a
// Saturday is observed the Friday before and one on a Sunday the Monday
// after, as federal offices do; so the New Year's Day of year+1 may be
// observed on December 31 of year, and is then listed, while a January 1
// that is a Saturday is observed in the year before and is not.
func USHolidays(year int) []Holiday {
	day := func(m time.Month, d int) time.Time { return time.Date(year, m, d, 0, 0, 0, 0, time.UTC) }
	// nth returns the n-th weekday wd of month m (n = -1: the last one).
	nth := func(n int, wd time.Weekday, m time.Month) time.Time {
		if n < 0 {
			last := day(m+1, 0)
			return last.AddDate(0, 0, -((int(last.Weekday()) - int(wd) + 7) % 7))
		}
		first := day(m, 1)
		return first.AddDate(0, 0, (int(wd)-int(first.Weekday())+7)%7+7*(n-1))
	}
	observed := func(t time.Time) time.Time {
		switch t.Weekday() {
		case time.Saturday:
			return t.AddDate(0, 0, -1)
		case time.Sunday:
			return t.AddDate(0, 0, 1)
		}
		return t
	}
	all := []Holiday{
		{observed(day(time.January, 1)), "New Year's Day"},
		{nth(3, time.Monday, time.January), "Martin Luther King Jr. Day"},
		{nth(3, time.Monday, time.February), "Washington's Birthday (Presidents' Day)"},
		{nth(-1, time.Monday, time.May), "Memorial Day"},
	}
	if year >= 2021 {
		all = append(all, Holiday{observed(day(time.June, 19)), "Juneteenth National Independence Day"})
	}
	all = append(all,
		Holiday{observed(day(time.July, 4)), "Independence Day"},
		Holiday{nth(1, time.Monday, time.September), "Labor Day"},
		Holiday{nth(2, time.Monday, time.October), "Columbus Day"},
		Holiday{observed(day(time.November, 11)), "Veterans Day"},
		Holiday{nth(4, time.Thursday, time.November), "Thanksgiving Day"},
		Holiday{observed(day(time.December, 25)), "Christmas Day"},
		Holiday{observed(time.Date(year+1, time.January, 1, 0, 0, 0, 0, time.UTC)), "New Year's Day"},
	)
	var out []Holiday
	for _, h := range all {
		if h.Date.Year() == year {
			out = append(out, h)
		}
	}
	return out
}

// Prime time of the shipped holidays file: from 04:00 to 17:30 on
// weekdays (the admin guide's shipped policy); weekends are non-prime.
const (
	DefaultPrimeStart    = "0400"
	DefaultNonPrimeStart = "1730"
)

// DefaultHolidays returns the holidays file a new sched_priv gets for
// year: prime time from 04:00 to 17:30 Monday to Friday, weekends
// non-prime, and the US federal holidays observed that year (USHolidays)
// non-prime all day, each as its day of the year with the date and name
// as the comment the format allows. year must have at most four digits,
// as a YEAR line does.
func DefaultHolidays(year int) ([]byte, error) {
	if year < 1 || year > 9999 {
		return nil, fmt.Errorf("holidays for year %d: want a year from 1 to 9999", year)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `* holidays - prime time and holidays of the gopbs scheduler for %d.
*
* pbs_sched wrote this file when it found none (a new PBS_HOME). Prime time
* is 04:00 to 17:30, Monday to Friday; evenings, nights, weekends and the
* holidays below are non-prime time. sched_config gives each option a
* prime and a non-prime setting; as shipped they are the same, so prime
* time changes nothing until an option there ends in prime or non_prime.
*
* To change prime time, edit the rows below. Each gives the time prime
* time starts and the time non-prime time starts, as HHMM, or "all" (that
* state all day) or "none" (it does not begin that day). Rows monday to
* friday may replace the weekday row for one day. If non-prime time starts
* before prime time, prime time runs past midnight. Without a YEAR line all
* time is prime time.
*
* Holidays are non-prime all day. Each line gives the day of the year
* (January 1 is 1); the rest of the line is free text. These are the US
* federal holidays as observed in %d (one on a Saturday on the Friday
* before, one on a Sunday on the Monday after): replace them with your
* site's.
*
* The days count in the YEAR below only. When the year ends the scheduler
* says so in sched_logs and in the server's comment (qstat -Bf): write the
* next year's file then. "pbs_sched -t" checks the files before you save.
*
HOLIDAYFILE_VERSION1
*
YEAR	%d
*
*		Prime	Non-Prime
* Day		Start	Start
*
weekday		%s	%s
saturday	none	all
sunday		none	all
*
* Day of	Calendar	Holiday
* Year		Date
*
`, year, year, year, DefaultPrimeStart, DefaultNonPrimeStart)
	for _, h := range USHolidays(year) {
		fmt.Fprintf(&b, "%d\t\t%s\t\t%s\n", h.YearDay(), h.Date.Format("Jan 2"), h.Name)
	}
	return b.Bytes(), nil
}
