//go:build faultpoints

package fault

import (
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// clockAhead is how far Now runs ahead of the host's clock, in
// nanoseconds: the duration in the file ClockEnvVar names.
var clockAhead atomic.Int64

func init() {
	path := os.Getenv(ClockEnvVar)
	if path == "" {
		return
	}
	readClock(path)
	// Polled rather than watched: a test build's daemon, and a file a
	// test rewrites a few times.
	go func() {
		for {
			time.Sleep(50 * time.Millisecond)
			readClock(path)
		}
	}()
}

// readClock takes the offset from path; a missing or unreadable file
// leaves it as it was (the test writes it by rename, whole).
func readClock(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if d, err := time.ParseDuration(strings.TrimSpace(string(b))); err == nil {
		clockAhead.Store(int64(d))
	}
}

// Now is the host's clock advanced by what the test wrote (ClockEnvVar).
// A jump is a jump of the monotonic reading too: durations measured
// across it include it, as a real clock's step would not.
func Now() time.Time { return time.Now().Add(time.Duration(clockAhead.Load())) }
