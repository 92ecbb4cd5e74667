package schedpriv

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
		if !s.ByQueue || s.StrictFIFO || s.HelpStarvingJobs || s.FairShare || s.RoundRobin || s.SortBy != NoSort || s.Backfill {
			t.Errorf("default policy (prime=%v): %+v", prime, s)
		}
	}
	if c.DedicatedPrefix != "ded" || c.MaxStarve != 24*time.Hour || c.UnknownShares != 10 {
		t.Errorf("defaults: %+v", c)
	}
	// Turning the documented switches on must give a valid file: the
	// companion values are already there.
	data, _ := Default(ConfigFile)
	data = append(data, "fair_share: true\nhelp_starving_jobs: true\n"...)
	if _, err := ParseConfig(bytes.NewReader(data), ConfigFile); err != nil {
		t.Errorf("default config with fair_share and help_starving_jobs on: %v", err)
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

func TestInstallDefaults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sched_priv")
	// An admin's file is never replaced.
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	mine := []byte("by_queue: false\n")
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), mine, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := InstallDefaults(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range DefaultFiles() {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(filepath.Join(dir, name))
		if name == ConfigFile {
			if !bytes.Equal(got, mine) || fi.Mode().Perm() != 0o600 {
				t.Errorf("existing %s was changed", name)
			}
			continue
		}
		want, _ := Default(name)
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
	if err := InstallDefaults(dir); err != nil {
		t.Fatal(err)
	}
	// A fresh directory gets everything and loads.
	fresh := filepath.Join(t.TempDir(), "a", "b")
	if err := InstallDefaults(fresh); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("created dir: %v %v", fi, err)
	}
	if f, err := Load(fresh, time.UTC); err != nil || len(f.Warnings) != 0 {
		t.Errorf("Load after InstallDefaults: %v %v", f, err)
	}
	// A directory that cannot be created is reported.
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	if err := InstallDefaults(filepath.Join(blocker, "sub")); err == nil {
		t.Error("InstallDefaults below a file should fail")
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
