package privdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

func TestLoadFixtures(t *testing.T) {
	dir := fixtureDir(t)
	f, err := Load(dir, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 0 {
		t.Errorf("warnings: %v", f.Warnings)
	}
	if f.Config.UnknownShares != 10 || f.Groups.Unknown.Shares != 10 {
		t.Error("resource_group should get sched_config's unknown_shares")
	}
	if g, ok := f.Groups.Lookup("usr7"); !ok || !near(g.Percentage, 0.18182) {
		t.Errorf("usr7: %+v", g)
	}
	if f.Holidays.Year != 1999 || len(f.Dedicated.Windows) != 2 {
		t.Errorf("holidays %d, windows %d", f.Holidays.Year, len(f.Dedicated.Windows))
	}
	check := f.Check(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	if len(check) != 1 || check[0].File != filepath.Join(dir, schedpriv.HolidaysFile) || check[0].Line != 81 {
		t.Errorf("Check = %v", check)
	}
	if len(f.Check(time.Date(1999, 5, 1, 0, 0, 0, 0, time.UTC))) != 0 {
		t.Error("no warning in 1999")
	}
}

func TestLoadErrors(t *testing.T) {
	// Problems in several files are all reported, each with file and line.
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(schedpriv.ConfigFile, "by_queue: true\nround_robin: maybe\n")
	write(schedpriv.HolidaysFile, "YEAR 2030\nweekday 0600\n")
	write(schedpriv.ResourceGroupFile, "a 1 nowhere 1\n")
	write(schedpriv.DedicatedFile, "\n\n\n13/01/2030 10:00 13/01/2030 11:00\n")
	f, err := Load(dir, time.UTC)
	if f != nil {
		t.Error("Files returned despite errors")
	}
	errs, ok := schedpriv.AsErrors(err)
	if !ok || len(errs) != 4 {
		t.Fatalf("want 4 problems, got %v", err)
	}
	for i, prefix := range []string{
		filepath.Join(dir, schedpriv.ConfigFile) + ":2: ",
		filepath.Join(dir, schedpriv.HolidaysFile) + ":2: ",
		filepath.Join(dir, schedpriv.ResourceGroupFile) + ":1: ",
		filepath.Join(dir, schedpriv.DedicatedFile) + ":4: ",
	} {
		if !strings.HasPrefix(errs[i].String(), prefix) {
			t.Errorf("problem %d = %q, want prefix %q", i, errs[i], prefix)
		}
	}
	// An unreadable entry (a directory where a file should be) is an I/O
	// error naming the file.
	if err := os.Remove(filepath.Join(dir, schedpriv.HolidaysFile)); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, schedpriv.HolidaysFile), 0o755)
	write(schedpriv.ConfigFile, "by_queue: true\n")
	write(schedpriv.ResourceGroupFile, "")
	write(schedpriv.DedicatedFile, "")
	_, err = Load(dir, time.UTC)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, schedpriv.HolidaysFile)) {
		t.Errorf("directory as holidays: %v", err)
	}
}
