package schedpriv

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func TestLoadMissingOptional(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{ConfigFile: {Data: []byte("unknown_shares: 3\n")}}
	f, err := LoadFS(fsys, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range f.Warnings {
		got = append(got, w.String())
	}
	want := []string{
		// The shipped holidays are made for a year, which LoadFS does not
		// know: without the file all time is prime, as in PBS.
		"holidays: file not found; all time is prime time (pbs_sched installs one for the current year when it starts)",
		"resource_group: file not found; using the shipped default",
		"dedicated_time: file not found; using the shipped default",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s", strings.Join(got, "\n"))
	}
	if f.Groups.Unknown.Shares != 3 || f.Holidays != nil || !f.Holidays.IsPrime(time.Now()) || f.Dedicated == nil {
		t.Errorf("defaults not applied: %+v", f)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	// No sched_config: an error, not a silent default.
	_, err := LoadFS(fstest.MapFS{}, time.UTC)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "sched_config") {
		t.Errorf("missing sched_config: %v", err)
	}
	// Problems in several files are all reported, each with file and line,
	// under the names LoadFSNamed gives the files.
	fsys := fstest.MapFS{
		ConfigFile:        {Data: []byte("by_queue: true\nround_robin: maybe\n")},
		HolidaysFile:      {Data: []byte("YEAR 2030\nweekday 0600\n")},
		ResourceGroupFile: {Data: []byte("a 1 nowhere 1\n")},
		DedicatedFile:     {Data: []byte("\n\n\n13/01/2030 10:00 13/01/2030 11:00\n")},
	}
	f, err := LoadFSNamed(fsys, func(name string) string { return "/pbs/sched_priv/" + name }, time.UTC)
	if f != nil {
		t.Error("Files returned despite errors")
	}
	wantProblems(t, err,
		"/pbs/sched_priv/sched_config:2: ",
		"/pbs/sched_priv/holidays:2: ",
		"/pbs/sched_priv/resource_group:1: ",
		"/pbs/sched_priv/dedicated_time:4: ",
	)
	// Without a display function the names are the files' own.
	_, err = LoadFSNamed(fsys, nil, time.UTC)
	wantProblems(t, err, "sched_config:2: ", "holidays:2: ", "resource_group:1: ", "dedicated_time:4: ")
	// An unreadable entry (a directory where a file should be) is an I/O
	// error naming the file.
	fsys[ConfigFile] = &fstest.MapFile{Data: []byte("by_queue: true\n")}
	fsys[HolidaysFile] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	fsys[ResourceGroupFile] = &fstest.MapFile{}
	fsys[DedicatedFile] = &fstest.MapFile{}
	_, err = LoadFSNamed(fsys, func(name string) string { return "/pbs/sched_priv/" + name }, time.UTC)
	if err == nil || !strings.Contains(err.Error(), "/pbs/sched_priv/holidays") {
		t.Errorf("directory as holidays: %v", err)
	}
}
