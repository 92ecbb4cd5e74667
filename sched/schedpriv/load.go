package schedpriv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"
)

// Files is everything the scheduler reads from sched_priv at start-up and on
// reconfiguration.
type Files struct {
	Config    *Config
	Holidays  *Holidays
	Groups    *Tree
	Dedicated *Dedicated
	// Warnings gathers the warnings of all four files, plus one for each
	// optional file that was missing.
	Warnings []Problem
}

// LoadFS reads the four sched_priv files from the top of fsys; dedicated
// times are read in loc (nil: UTC).
//
// sched_config must exist. A missing resource_group or dedicated_time is
// replaced by the shipped default, with a warning; a missing holidays file
// makes all time prime time, with a warning (the shipped one is made for a
// year, which LoadFS does not know; see Defaults and DefaultHolidays). Any
// error in any file makes LoadFS return nil and an error (an Errors when
// the files are readable) listing every problem with file and line, so the
// caller can keep its previous settings. The resource_group tree gets
// sched_config's unknown_shares.
func LoadFS(fsys fs.FS, loc *time.Location) (*Files, error) {
	return LoadFSNamed(fsys, func(name string) string { return name }, loc)
}

// LoadFSNamed is LoadFS with the name messages and warnings give each file:
// display maps a file name (ConfigFile, ...) to it. privdir.Load passes
// the file's path in its directory.
func LoadFSNamed(fsys fs.FS, display func(name string) string, loc *time.Location) (*Files, error) {
	return load(func(name string) ([]byte, error) { return fs.ReadFile(fsys, path.Clean(name)) }, display, loc)
}

// Defaults returns the shipped files parsed, with the holidays file made
// for year: what a scheduler runs on a new PBS_HOME that year.
func Defaults(year int, loc *time.Location) (*Files, error) {
	return load(func(name string) ([]byte, error) { return Default(name, year) }, nil, loc)
}

// load reads the four files through readFile (fs.ErrNotExist for a
// missing one), as LoadFS describes.
func load(readFile func(name string) ([]byte, error), display func(name string) string, loc *time.Location) (*Files, error) {
	if display == nil {
		display = func(name string) string { return name }
	}
	f := &Files{}
	var all Errors
	var other []error
	collect := func(err error) {
		if err == nil {
			return
		}
		if e, ok := AsErrors(err); ok {
			all = append(all, e...)
			return
		}
		other = append(other, err)
	}

	// read returns a file's contents, or the default (with a warning) when
	// an optional file is missing. The holidays default depends on the
	// year, which this pure package does not know: a missing holidays file
	// means all time is prime time, as in PBS.
	read := func(name string, optional bool) ([]byte, bool) {
		data, err := readFile(name)
		if err == nil {
			return data, true
		}
		if optional && errors.Is(err, fs.ErrNotExist) {
			if name == HolidaysFile {
				f.Warnings = append(f.Warnings, Problem{File: display(name), Msg: "file not found; all time is prime time (pbs_sched installs one for the current year when it starts)"})
				return nil, false
			}
			f.Warnings = append(f.Warnings, Problem{File: display(name), Msg: "file not found; using the shipped default"})
			def, derr := Default(name, 0)
			if derr != nil {
				other = append(other, derr)
				return nil, false
			}
			return def, true
		}
		other = append(other, fmt.Errorf("%s: %w", display(name), err))
		return nil, false
	}

	unknownShares := 0
	if data, ok := read(ConfigFile, false); ok {
		cfg, err := ParseConfig(bytes.NewReader(data), display(ConfigFile))
		collect(err)
		if cfg != nil {
			f.Config = cfg
			f.Warnings = append(f.Warnings, cfg.Warnings...)
			unknownShares = cfg.UnknownShares
		}
	}
	if data, ok := read(HolidaysFile, true); ok {
		h, err := ParseHolidays(bytes.NewReader(data), display(HolidaysFile))
		collect(err)
		if h != nil {
			f.Holidays = h
			f.Warnings = append(f.Warnings, h.Warnings...)
		}
	}
	if data, ok := read(ResourceGroupFile, true); ok {
		t, err := ParseResourceGroup(bytes.NewReader(data), display(ResourceGroupFile), unknownShares)
		collect(err)
		if t != nil {
			f.Groups = t
			f.Warnings = append(f.Warnings, t.Warnings...)
		}
	}
	if data, ok := read(DedicatedFile, true); ok {
		d, err := ParseDedicated(bytes.NewReader(data), display(DedicatedFile), loc)
		collect(err)
		if d != nil {
			f.Dedicated = d
		}
	}
	switch {
	case len(other) > 0 && len(all) > 0:
		return nil, errors.Join(append(other, all)...)
	case len(other) > 0:
		return nil, errors.Join(other...)
	case len(all) > 0:
		return nil, all
	}
	return f, nil
}

// Check returns the findings that depend on the date: a holidays file for
// another year. Parsing never looks at the clock, so a scheduler calls this
// with its own now (at start-up and, say, on the first cycle of a year).
func (f *Files) Check(now time.Time) []Problem {
	var out []Problem
	if w, ok := f.Holidays.YearWarning(now); ok {
		out = append(out, w)
	}
	return out
}
