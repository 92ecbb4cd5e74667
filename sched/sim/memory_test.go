package sim

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/gopbs/gopbs/internal/trace"
)

// synthetic is an SWF trace of n jobs written as it is read, never held:
// a job every 10 s of 1 to 4 processors running 5 to 40 s, on a machine
// of 64, so the queue stays short whatever n is.
type synthetic struct {
	n, i int
	buf  []byte
}

func (s *synthetic) Read(p []byte) (int, error) {
	for len(s.buf) < len(p) && s.i <= s.n {
		if s.i == 0 {
			s.buf = append(s.buf, "; MaxProcs: 64\n; UnixStartTime: 1000000000\n"...)
		} else {
			run, procs := 5+s.i*7%36, 1+s.i%4
			s.buf = fmt.Appendf(s.buf, "%d %d -1 %d %d -1 -1 %d %d -1 1 %d 1 -1 -1 -1 -1 -1\n", s.i, s.i*10, run, procs, procs, run+30, s.i%97)
		}
		s.i++
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.buf)
	s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	return n, nil
}

// TestMemoryFollowsQueue replays 500,000 jobs whose queue stays short,
// streaming them from the reader through the simulator into a Stats, and
// measures the live heap (after a collection) every 25,000 jobs: it must
// stay far below what holding the trace would take (the trace's Jobs
// alone, before the simulator's copy and the outcomes). What grows with
// the trace is the Stats' 4 bytes per wait, 2 MB here.
func TestMemoryFollowsQueue(t *testing.T) {
	// Not parallel: it measures the process's allocations.
	if testing.Short() {
		t.Skip("-short")
	}
	const n = 500_000
	s, err := trace.NewStream(&synthetic{n: n})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Normalize(0); err != nil {
		t.Fatal(err)
	}
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	base := m.HeapAlloc
	stats := NewStats(64)
	var peak uint64
	maxLive, next := 0, 0
	t0 := time.Now()
	cfg := Config{Nodes: machine(64), Policy: settings{StrictFIFO: true, Backfill: true}, Origin: time.Unix(1_000_000_000, 0),
		Progress: func(done, live int) {
			maxLive = max(maxLive, live)
			if done < next {
				return
			}
			next = done + 25_000
			runtime.GC()
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc-min(base, m.HeapAlloc))
		}}
	err = Run(cfg, traceJobs{s}, func(o Outcome) error { stats.Add(o); return nil })
	if err != nil {
		t.Fatal(err)
	}
	got := stats.Metrics()
	whole := uint64(n) * uint64(unsafe.Sizeof(trace.Job{}))
	t.Logf("%d jobs in %v: at most %d queued or running; live heap at most %.1f MB (the trace's Jobs alone: %.0f MB)",
		got.Jobs, time.Since(t0).Round(time.Millisecond), maxLive, float64(peak)/(1<<20), float64(whole)/(1<<20))
	if got.Jobs != n || next == 0 {
		t.Fatalf("%d jobs replayed, %d sampled", got.Jobs, next)
	}
	if bound := whole / 8; peak > bound {
		t.Errorf("live heap reached %d bytes, more than %d: memory follows the trace, not the queue", peak, bound)
	}
}
