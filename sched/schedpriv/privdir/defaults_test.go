package privdir

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

func TestInstallDefaults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sched_priv")
	// An admin's file is never replaced.
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	mine := []byte("by_queue: false\n")
	if err := os.WriteFile(filepath.Join(dir, schedpriv.ConfigFile), mine, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := InstallDefaults(dir, 2030); err != nil {
		t.Fatal(err)
	}
	for _, name := range schedpriv.DefaultFiles() {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(filepath.Join(dir, name))
		if name == schedpriv.ConfigFile {
			if !bytes.Equal(got, mine) || fi.Mode().Perm() != 0o600 {
				t.Errorf("existing %s was changed", name)
			}
			continue
		}
		want, _ := schedpriv.Default(name, 2030)
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the shipped default", name)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v, want 0644", name, fi.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("files in dir: %v (temporary files left?)", entries)
	}
	// Installing again changes nothing and is not an error.
	if err := InstallDefaults(dir, 2030); err != nil {
		t.Fatal(err)
	}
	// A fresh directory gets everything and loads.
	fresh := filepath.Join(t.TempDir(), "a", "b")
	if err := InstallDefaults(fresh, 2030); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("created dir: %v %v", fi, err)
	}
	if f, err := Load(fresh, time.UTC); err != nil || len(f.Warnings) != 0 {
		t.Errorf("Load after InstallDefaults: %v %v", f, err)
	} else if f.Holidays.Year != 2030 || len(f.Check(time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC))) != 0 {
		t.Errorf("installed holidays are for %d, not the year given", f.Holidays.Year)
	}
	// A holidays file written by hand stays, whatever its year.
	old := filepath.Join(t.TempDir(), "old")
	os.MkdirAll(old, 0o750)
	os.WriteFile(filepath.Join(old, schedpriv.HolidaysFile), []byte("YEAR 1999\n"), 0o644)
	if err := InstallDefaults(old, 2030); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(old, schedpriv.HolidaysFile)); string(b) != "YEAR 1999\n" {
		t.Errorf("an existing holidays file was replaced: %q", b)
	}
	// A directory that cannot be created is reported.
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	if err := InstallDefaults(filepath.Join(blocker, "sub"), 2030); err == nil {
		t.Error("InstallDefaults below a file should fail")
	}
}
