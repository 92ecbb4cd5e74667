package schedpriv

import (
	"bytes"
	"errors"
	"io/fs"
	"testing"
	"time"
)

func TestDefaultsParse(t *testing.T) {
	f, err := Defaults(time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 0 {
		t.Errorf("shipped files should parse without warnings: %v", f.Warnings)
	}
	c := f.Config
	for _, prime := range []bool{true, false} {
		s := c.Active(prime)
		if !s.ByQueue || s.StrictFIFO || s.HelpStarvingJobs || s.FairShare || s.RoundRobin || s.SortBy != NoSort || !s.Backfill {
			t.Errorf("default policy (prime=%v): %+v", prime, s)
		}
	}
	if c.DedicatedPrefix != "ded" || c.MaxStarve != 24*time.Hour || c.UnknownShares != 10 || c.BackfillDepth != DefaultBackfillDepth {
		t.Errorf("defaults: %+v", c)
	}
	// Turning the documented switches on must give a valid file: the
	// companion values are already there.
	data, _ := Default(ConfigFile)
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
	// Turning backfilling off as the comment says gives a valid file, with
	// nothing to warn about (backfill_depth stays, unused).
	data, _ = Default(ConfigFile)
	data = append(data, "backfill: false all\nbackfill_depth: all\n"...)
	if off, err := ParseConfig(bytes.NewReader(data), ConfigFile); err != nil || off.Prime.Backfill || off.NonPrime.Backfill ||
		off.BackfillDepth != BackfillDepthAll || len(off.Warnings) != 0 {
		t.Errorf("default config with backfill off: %+v, %v", off, err)
	}
	if f.Holidays.Year != 0 || !f.Holidays.IsPrime(time.Date(2030, 1, 5, 3, 0, 0, 0, time.UTC)) {
		t.Error("default holidays should make all time prime")
	}
	if f.Groups.Len() != 2 || f.Groups.Unknown.Shares != 10 || f.Groups.Unknown.Percentage != 1 {
		t.Errorf("default resource_group: %d nodes", f.Groups.Len())
	}
	if len(f.Dedicated.Windows) != 0 {
		t.Error("default dedicated_time has no windows")
	}
	if len(f.Check(time.Now())) != 0 {
		t.Error("default files have nothing to warn about at any date")
	}
}

func TestDefaultFS(t *testing.T) {
	for _, name := range DefaultFiles() {
		a, err := fs.ReadFile(DefaultFS(), name)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Default(name)
		if !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s: DefaultFS and Default disagree", name)
		}
	}
	if _, err := Default("usage"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no usage default expected: %v", err)
	}
}
