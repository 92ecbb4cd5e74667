package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTB records a failure and ends the calling goroutine, as testing.T
// does.
type fakeTB struct {
	mu     sync.Mutex
	failed string
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Errorf(string, ...any) {}
func (f *fakeTB) Logf(string, ...any)   {}
func (f *fakeTB) Cleanup(func())        {}
func (f *fakeTB) Failed() bool          { f.mu.Lock(); defer f.mu.Unlock(); return f.failed != "" }
func (f *fakeTB) Fatal(args ...any)     { f.Fatalf("%s", fmt.Sprint(args...)) }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failed = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// run calls wait with a fakeTB on its own goroutine (Fatalf ends it) and
// returns the failure, "" for none.
func run(wait func(TB)) string {
	f := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(f)
	}()
	<-done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// WaitFor returns once cond holds, and otherwise fails with what and the
// last thing cond saw.
func TestWaitFor(t *testing.T) {
	calls := 0
	if failed := run(func(tb TB) {
		WaitFor(tb, "third call", 5*time.Second, func() (bool, string) {
			calls++
			return calls == 3, fmt.Sprint(calls)
		})
	}); failed != "" || calls != 3 {
		t.Fatalf("after %d calls: failed %q", calls, failed)
	}
	n := 0
	start := time.Now()
	failed := run(func(tb TB) {
		WaitFor(tb, "the impossible", 200*time.Millisecond, func() (bool, string) {
			n++
			return false, fmt.Sprintf("look %d", n)
		})
	})
	if !strings.HasPrefix(failed, "the impossible: ") || !strings.HasSuffix(failed, fmt.Sprintf("look %d", n)) {
		t.Errorf("failure %q does not say what was awaited and the last look (%d)", failed, n)
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 5*time.Second {
		t.Errorf("gave up after %v, want the 200ms timeout", took)
	}
}

// writeDay writes a daily file of dir.
func writeDay(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The log readers read every day's file from the cluster's start on, in
// date order, so that a test running across midnight sees the lines
// written before and after it; earlier days and other files are left out.
func TestDailyLogsAcrossMidnight(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sched_logs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2031, 12, 31, 23, 59, 58, 0, time.Local)
	writeDay(t, dir, "20320101", "after midnight\n")
	writeDay(t, dir, "20311231", "before midnight\n")
	writeDay(t, dir, "20311230", "the day before the test\n")
	writeDay(t, dir, "notes", "not a day\n")
	writeDay(t, dir, "203201010", "not a day either\n")
	c := &Cluster{Home: home, started: start}
	if got, want := c.SchedLog(), "before midnight\nafter midnight\n"; got != want {
		t.Errorf("SchedLog = %q, want %q", got, want)
	}
	if got := ReadDaily(filepath.Join(home, "missing"), start); got != "" {
		t.Errorf("a missing directory reads %q", got)
	}
}
