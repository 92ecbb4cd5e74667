// Package logging builds the daemons' go-hclog loggers: one line per event
// with key/value pairs, written to stderr and to a daily file
// <dir>/YYYYMMDD as PBS daemons do, so that tracejob can find a job's
// history by date.
package logging

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DailyFile is an io.Writer appending to dir/YYYYMMDD (local time),
// switching files at midnight. It is safe for concurrent use.
type DailyFile struct {
	dir string
	mu  sync.Mutex
	day string
	f   *os.File
	now func() time.Time
}

// NewDailyFile creates dir if needed.
func NewDailyFile(dir string) (*DailyFile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	return &DailyFile{dir: dir, now: time.Now}, nil
}

// Write appends p to today's file.
func (d *DailyFile) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	day := d.now().Format("20060102")
	if day != d.day || d.f == nil {
		if d.f != nil {
			d.f.Close()
		}
		f, err := os.OpenFile(filepath.Join(d.dir, day), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return 0, err
		}
		d.f, d.day = f, day
	}
	return d.f.Write(p)
}

// Close closes the current file.
func (d *DailyFile) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return nil
	}
	err := d.f.Close()
	d.f = nil
	return err
}

// New returns a logger named name writing to stderr and the daily file in
// dir, and the file to close at exit. level is an hclog level name ("info",
// "debug"); an empty level means info.
func New(name, dir, level string, stderr io.Writer) (hclog.Logger, io.Closer, error) {
	df, err := NewDailyFile(dir)
	if err != nil {
		return nil, nil, err
	}
	out := io.Writer(df)
	if stderr != nil {
		out = io.MultiWriter(df, stderr)
	}
	lvl := hclog.LevelFromString(level)
	if lvl == hclog.NoLevel {
		lvl = hclog.Info
	}
	log := hclog.New(&hclog.LoggerOptions{
		Name:            name,
		Level:           lvl,
		Output:          out,
		TimeFormat:      "2006-01-02T15:04:05.000Z0700",
		IncludeLocation: false,
		Mutex:           &sync.Mutex{},
	})
	return log, df, nil
}
