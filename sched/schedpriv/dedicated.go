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

// Window is one dedicated-time window. Dedicated time is in force strictly
// between From and To.
type Window struct {
	From, To time.Time
	Line     int // where the file gives it; 0 when not from a file
}

// Contains reports whether t is inside the window: From < t < To.
func (w Window) Contains(t time.Time) bool { return w.From.Before(t) && t.Before(w.To) }

// Dedicated is a parsed dedicated_time file: windows sorted by start, not
// overlapping. A nil *Dedicated has no windows.
type Dedicated struct {
	Windows []Window
}

// TwoDigitYearPivot decides the century of a two-digit year in
// dedicated_time: below it means 20xx, otherwise 19xx (so 98 is 1998 and
// 05 is 2005), the classic reading, applied to both ends alike.
const TwoDigitYearPivot = 90

// ParseDedicated reads a dedicated_time file; times are wall-clock times in
// loc (nil means UTC). name is used in messages. On error it returns nil
// and an Errors listing every problem.
//
// Each line is "MM/DD/YYYY HH:MM MM/DD/YYYY HH:MM" (start, end); the year
// has four digits or one or two (see TwoDigitYearPivot), month and day may
// have one digit. Lines starting with '#' or '*' are comments. Month, day
// (for that month and year), hour (0-23) and minute (0-59) are checked, the
// end must be after the start, and windows may not overlap. Windows in the
// past are kept: use Upcoming to drop them.
func ParseDedicated(r io.Reader, name string, loc *time.Location) (*Dedicated, error) {
	if loc == nil {
		loc = time.UTC
	}
	rep := report{file: name}
	d := &Dedicated{}
	eachLine(r, &rep, func(n int, line string) {
		if isComment(line) {
			return
		}
		w := fields(line)
		if len(w) < 4 {
			rep.errorf(n, "want \"MM/DD/YYYY HH:MM MM/DD/YYYY HH:MM\", got %q", strings.TrimSpace(line))
			return
		}
		if len(w) > 4 && !trailingComment(w[4:]) {
			rep.errorf(n, "unexpected %q after the end time", w[4])
			return
		}
		from, err := parseDedTime(w[0], w[1], loc)
		if err != nil {
			rep.errorf(n, "start: %v", err)
			return
		}
		to, err := parseDedTime(w[2], w[3], loc)
		if err != nil {
			rep.errorf(n, "end: %v", err)
			return
		}
		if !to.After(from) {
			rep.errorf(n, "end %s is not after start %s", w[2]+" "+w[3], w[0]+" "+w[1])
			return
		}
		d.Windows = append(d.Windows, Window{From: from, To: to, Line: n})
	})
	slices.SortStableFunc(d.Windows, func(a, b Window) int { return a.From.Compare(b.From) })
	for i := 1; i < len(d.Windows); i++ {
		prev, cur := d.Windows[i-1], d.Windows[i]
		if cur.From.Before(prev.To) {
			rep.errorf(cur.Line, "window overlaps the one on line %d", prev.Line)
		}
	}
	if err := rep.err(); err != nil {
		return nil, err
	}
	return d, nil
}

func parseDedTime(date, clock string, loc *time.Location) (time.Time, error) {
	dp := strings.Split(date, "/")
	if len(dp) != 3 {
		return time.Time{}, fmt.Errorf("bad date %q (want MM/DD/YYYY)", date)
	}
	month, err1 := smallNumber(dp[0], 2)
	day, err2 := smallNumber(dp[1], 2)
	year, err3 := smallNumber(dp[2], 4)
	if err1 != nil || err2 != nil || err3 != nil || len(dp[2]) == 3 {
		return time.Time{}, fmt.Errorf("bad date %q (want MM/DD/YYYY or MM/DD/YY)", date)
	}
	if len(dp[2]) <= 2 {
		if year < TwoDigitYearPivot {
			year += 2000
		} else {
			year += 1900
		}
	}
	if year < 1900 {
		return time.Time{}, fmt.Errorf("bad date %q: year %d is before 1900", date, year)
	}
	if month < 1 || month > 12 {
		return time.Time{}, fmt.Errorf("bad date %q: month %d is not 1-12", date, month)
	}
	if last := daysIn(time.Month(month), year); day < 1 || day > last {
		return time.Time{}, fmt.Errorf("bad date %q: day %d is not 1-%d", date, day, last)
	}
	cp := strings.Split(clock, ":")
	if len(cp) != 2 {
		return time.Time{}, fmt.Errorf("bad time %q (want HH:MM)", clock)
	}
	hour, err1 := smallNumber(cp[0], 2)
	minute, err2 := smallNumber(cp[1], 2)
	if err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("bad time %q (want HH:MM)", clock)
	}
	if hour > 23 || minute > 59 {
		return time.Time{}, fmt.Errorf("bad time %q: not 00:00-23:59", clock)
	}
	return time.Date(year, time.Month(month), day, hour, minute, 0, 0, loc), nil
}

// smallNumber reads 1 to maxDigits decimal digits.
func smallNumber(s string, maxDigits int) (int, error) {
	if !isDigits(s) || len(s) > maxDigits {
		return 0, fmt.Errorf("bad number %q", s)
	}
	return strconv.Atoi(s)
}

func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// Current returns the window now is inside (From < now < To).
func (d *Dedicated) Current(now time.Time) (Window, bool) {
	if d == nil {
		return Window{}, false
	}
	for _, w := range d.Windows {
		if w.Contains(now) {
			return w, true
		}
		if w.From.After(now) {
			break
		}
	}
	return Window{}, false
}

// Next returns the first window starting at or after now. A window starting
// exactly now is next rather than current, since dedicated time begins
// strictly after From.
func (d *Dedicated) Next(now time.Time) (Window, bool) {
	if d == nil {
		return Window{}, false
	}
	for _, w := range d.Windows {
		if !w.From.Before(now) {
			return w, true
		}
	}
	return Window{}, false
}

// Boundary returns the next instant at which dedicated status changes:
// the end of the current window, or else the start of the next one. A job
// that should not cross into or out of dedicated time must end by then.
func (d *Dedicated) Boundary(now time.Time) (time.Time, bool) {
	if w, ok := d.Current(now); ok {
		return w.To, true
	}
	if w, ok := d.Next(now); ok {
		return w.From, true
	}
	return time.Time{}, false
}

// Upcoming returns a copy without the windows that have ended by now
// (To <= now). The parser keeps every window so that parsing does not
// depend on the clock; a scheduler drops past ones when it likes.
func (d *Dedicated) Upcoming(now time.Time) *Dedicated {
	out := &Dedicated{}
	if d == nil {
		return out
	}
	for _, w := range d.Windows {
		if w.To.After(now) {
			out.Windows = append(out.Windows, w)
		}
	}
	return out
}

// Format writes the windows, in each one's own location, in the file's
// format with four-digit years; ParseDedicated reads them back (in the
// same location) to the same instants.
func (d *Dedicated) Format(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if d != nil {
		for _, win := range d.Windows {
			fmt.Fprintf(bw, "%s %s\n", win.From.Format("01/02/2006 15:04"), win.To.Format("01/02/2006 15:04"))
		}
	}
	return bw.Flush()
}
