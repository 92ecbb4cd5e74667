package schedpriv

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"
)

// The shipped files are the admin guide's shipped policy: jobs by queue
// priority in prime and non-prime time, smallest memory first within a
// queue, help for jobs starving over 24 hours, backfilling on; prime time
// 04:00-17:30 on weekdays, weekends and the year's holidays non-prime.
func TestDefaultsParse(t *testing.T) {
	t.Parallel()
	f, err := Defaults(2030, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 0 {
		t.Errorf("shipped files should parse without warnings: %v", f.Warnings)
	}
	c := f.Config
	for _, prime := range []bool{true, false} {
		s := c.Active(prime)
		if !s.ByQueue || !s.SortQueues || s.SortBy != SmallestMemoryFirst || !s.HelpStarvingJobs || !s.Backfill ||
			s.StrictFIFO || s.FairShare || s.RoundRobin || s.LoadBalancing || s.LoadBalancingRR {
			t.Errorf("default policy (prime=%v): %+v", prime, s)
		}
	}
	if !equalSettings(c.Prime, c.NonPrime) {
		t.Errorf("prime and non-prime differ as shipped:\n%+v\n%+v", c.Prime, c.NonPrime)
	}
	if c.DedicatedPrefix != "ded" || c.MaxStarve != 24*time.Hour || c.UnknownShares != 10 ||
		c.BackfillDepth != DefaultBackfillDepth || c.LogFilter != 256 {
		t.Errorf("defaults: %+v", c)
	}
	// Turning the documented switches on must give a valid file: the
	// companion values are already there.
	data, _ := Default(ConfigFile, 2030)
	data = append(data, "fair_share: true\nhelp_starving_jobs: true\n"...)
	if _, err := ParseConfig(bytes.NewReader(data), ConfigFile); err != nil {
		t.Errorf("default config with fair_share and help_starving_jobs on: %v", err)
	}
	// The shipped file states what an empty one means for backfilling.
	empty := NewConfig()
	if c.Prime.Backfill != empty.Prime.Backfill || c.NonPrime.Backfill != empty.NonPrime.Backfill || c.BackfillDepth != empty.BackfillDepth {
		t.Errorf("shipped backfill %v/%v depth %d; an empty file gives %v/%v depth %d",
			c.Prime.Backfill, c.NonPrime.Backfill, c.BackfillDepth, empty.Prime.Backfill, empty.NonPrime.Backfill, empty.BackfillDepth)
	}
	// Turning options off as the comments say gives a valid file, with
	// nothing to warn about (backfill_depth and max_starve stay, unused).
	data, _ = Default(ConfigFile, 2030)
	data = append(data, "backfill: false all\nbackfill_depth: all\nhelp_starving_jobs: false all\n"...)
	if off, err := ParseConfig(bytes.NewReader(data), ConfigFile); err != nil || off.Prime.Backfill || off.NonPrime.Backfill ||
		off.Prime.HelpStarvingJobs || off.BackfillDepth != BackfillDepthAll || len(off.Warnings) != 0 {
		t.Errorf("default config with backfill and help_starving_jobs off: %+v, %v", off, err)
	}
	// The comment's example of a night policy is valid.
	data, _ = Default(ConfigFile, 2030)
	data = append(data, "strict_fifo: false prime\nstrict_fifo: true  non_prime\n"...)
	if night, err := ParseConfig(bytes.NewReader(data), ConfigFile); err != nil || night.Prime.StrictFIFO || !night.NonPrime.StrictFIFO {
		t.Errorf("the comment's prime/non_prime example: %+v, %v", night, err)
	}

	// The comment's job_sort_formula example is valid as it stands, with
	// fair_share on or off.
	data, _ = Default(ConfigFile, 2030)
	example := ""
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "#job_sort_formula:") {
			example = strings.TrimPrefix(line, "#")
		}
	}
	for _, extra := range []string{"", "fair_share: true\n"} {
		c, err := ParseConfig(strings.NewReader(string(data)+example+"\n"+extra), ConfigFile)
		if example == "" || err != nil || c.JobSortFormula == nil || !c.JobSortFormula.UsesFairshare() || len(c.Warnings) != 0 {
			t.Errorf("the comment's job_sort_formula example %q (%q): %v, %v", example, extra, c, err)
		}
	}

	h := f.Holidays
	if h.Year != 2030 {
		t.Errorf("holidays year %d, want the year asked for", h.Year)
	}
	// 2030-01-07 is a Monday.
	for _, tt := range []struct {
		t     time.Time
		prime bool
	}{
		{at(2030, 1, 7, 3, 59, 0), false}, {at(2030, 1, 7, 4, 0, 0), true}, {at(2030, 1, 7, 12, 0, 0), true},
		{at(2030, 1, 11, 17, 29, 0), true}, {at(2030, 1, 11, 17, 30, 0), false}, {at(2030, 1, 11, 23, 0, 0), false},
		{at(2030, 1, 12, 12, 0, 0), false}, {at(2030, 1, 13, 12, 0, 0), false}, // the weekend
		{at(2030, 1, 1, 12, 0, 0), false},   // New Year's Day, a Tuesday
		{at(2030, 11, 28, 12, 0, 0), false}, // Thanksgiving
		{at(2030, 11, 29, 12, 0, 0), true},  // the Friday after
	} {
		if got := h.IsPrime(tt.t); got != tt.prime {
			t.Errorf("IsPrime(%v) = %v, want %v", tt.t, got, tt.prime)
		}
	}
	if f.Groups.Len() != 2 || f.Groups.Unknown.Shares != 10 || f.Groups.Unknown.Percentage != 1 {
		t.Errorf("default resource_group: %d nodes", f.Groups.Len())
	}
	if len(f.Dedicated.Windows) != 0 {
		t.Error("default dedicated_time has no windows")
	}
	if w := f.Check(at(2030, 6, 1, 0, 0, 0)); len(w) != 0 {
		t.Errorf("default files for this year: %v", w)
	}
	if w := f.Check(at(2031, 1, 1, 0, 0, 0)); len(w) != 1 || !strings.Contains(w[0].Msg, "holidays are for 2030 but the year is 2031") {
		t.Errorf("default files a year on: %v", w)
	}
}

func equalSettings(a, b Settings) bool {
	var fa, fb bytes.Buffer
	ca, cb := NewConfig(), NewConfig()
	ca.Prime, ca.NonPrime = a, a
	cb.Prime, cb.NonPrime = b, b
	ca.Format(&fa)
	cb.Format(&fb)
	return fa.String() == fb.String()
}

func TestDefault(t *testing.T) {
	t.Parallel()
	for _, name := range DefaultFiles() {
		a, err := Default(name, 2030)
		if err != nil || len(a) == 0 {
			t.Fatalf("%s: %v", name, err)
		}
		// Every shipped file says in comments what it does and how to
		// change it: it opens with a comment block.
		if !strings.HasPrefix(string(a), "# "+name+" - ") && !strings.HasPrefix(string(a), "* "+name+" - ") {
			t.Errorf("%s does not open with its own description:\n%.80s", name, a)
		}
	}
	if _, err := Default("usage", 2030); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no usage default expected: %v", err)
	}
	if _, err := Default(HolidaysFile, 0); err == nil {
		t.Error("holidays for year 0")
	}
	if _, err := Default(HolidaysFile, 10000); err == nil {
		t.Error("holidays for year 10000")
	}
}
