package sim

import (
	"os"
	"strconv"
	"testing"
	"time"

	"gopbs/internal/trace"
)

// BenchmarkReplayKTH replays KTH-SP2 (27,992 jobs on 100 processors)
// with EASY (strict fifo + backfill): see BENCHMARKS.md.
func BenchmarkReplayKTH(b *testing.B) {
	path := "../../../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz"
	if p := os.Getenv("PBSSIM_TRACE"); p != "" {
		path = p // another trace, for profiling
	}
	if _, err := os.Stat(path); err != nil {
		b.Skip("no trace")
	}
	w, err := trace.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := trace.Normalize(w, 0); err != nil {
		b.Fatal(err)
	}
	jobs := make([]Job, len(w.Jobs))
	for i, j := range w.Jobs {
		jobs[i] = Job{ID: strconv.FormatInt(j.ID, 10), Submit: j.Submit, Run: j.Run, Procs: j.Procs, Walltime: j.ReqTime, User: j.User}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		outs, err := Run(Config{Nodes: machine(w.MaxProcs), Policy: settings{StrictFIFO: true, Backfill: true}, Origin: time.Unix(0, 0)}, jobs)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			m := Measure(outs, w.MaxProcs)
			b.Logf("KTH EASY: avg wait %.0f s, avg bsld %.2f, utilization %.3f", m.AvgWait, m.AvgBSLD, m.Utilization)
		}
	}
}
