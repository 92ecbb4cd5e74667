package sim

import (
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/trace"
)

// traceJobs adapts a trace stream to a Source, as pbs_simulate does.
type traceJobs struct{ s *trace.Stream }

func (t traceJobs) Next() (Job, error) {
	j, err := t.s.Next()
	if err != nil {
		return Job{}, err
	}
	return Job{ID: strconv.FormatInt(j.ID, 10), Submit: j.Submit, Run: j.Run, Procs: j.Procs, Walltime: j.ReqTime, User: j.User}, nil
}

// BenchmarkReplayKTH replays KTH-SP2 (27,992 jobs on 100 processors)
// with EASY (strict fifo + backfill), streaming the trace: see
// BENCHMARKS.md.
func BenchmarkReplayKTH(b *testing.B) {
	path := "../../../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz"
	if p := os.Getenv("PBSSIM_TRACE"); p != "" {
		path = p // another trace, for profiling
	}
	if _, err := os.Stat(path); err != nil {
		b.Skip("no trace")
	}
	for i := 0; i < b.N; i++ {
		s, err := trace.OpenStream(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Normalize(0); err != nil {
			b.Fatal(err)
		}
		procs := s.Workload.MaxProcs
		stats := NewStats(procs)
		err = Run(Config{Nodes: machine(procs), Policy: settings{StrictFIFO: true, Backfill: true}, Origin: time.Unix(0, 0)},
			traceJobs{s}, func(o Outcome) error { stats.Add(o); return nil })
		s.Close()
		if err != nil && err != io.EOF {
			b.Fatal(err)
		}
		if i == 0 {
			m := stats.Metrics()
			b.Logf("KTH EASY: avg wait %.0f s, avg bsld %.2f, utilization %.3f", m.AvgWait, m.AvgBSLD, m.Utilization)
		}
	}
}
