package sim

import (
	"cmp"
	"container/heap"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/trace"
	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fifo"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
)

// bareReplay is the yardstick of the simulator: the replay rules of
// ../shared/traces/README.md ("Reference semantics for comparisons": one
// machine of procs processors, jobs in submit order, no queues, no
// sorting) with nothing but a slice for the queue and a heap of ends,
// FCFS or, when easy, EASY with every running job whose expected end is
// at the shadow time counted (all ties). Its cost is what the rules
// themselves cost; BenchmarkReplay sets the simulator beside it, and
// TestReplayMatchesBareLoop checks the two start every job at the same
// second.
//
// Two details follow the FIFO policy where the README says nothing: a job
// without a walltime (run time 0 and no request) is never backfilled, and
// while it runs it holds its processors with no known end.
//
// start is called with each job's place in src and its start time (-1
// for a job that never starts), in no particular order.
func bareReplay(src Source, procs int, easy bool, start func(seq int, at int64)) error {
	type queued struct {
		seq           int
		procs         int
		run, walltime int64
	}
	free := procs
	var queue []queued
	var ends bareEnds
	// running holds the jobs started, ended ones with procs 0, and ests
	// the running jobs' expected ends, for EASY's shadow time.
	var running, ests []bareEst
	var next Job
	seq := 0
	more := true
	pull := func() error {
		j, err := src.Next()
		if err == io.EOF {
			more = false
			return nil
		}
		next = j
		return err
	}
	if err := pull(); err != nil {
		return err
	}
	begin := func(q queued, now int64) {
		start(q.seq, now)
		free -= q.procs
		heap.Push(&ends, bareEnd{at: now + q.run, procs: q.procs, id: len(running)})
		e := bareEst{at: -1, procs: q.procs}
		if q.walltime > 0 {
			e.at = now + q.walltime
		}
		running = append(running, e)
	}
	for more || ends.Len() > 0 {
		now := int64(-1)
		if ends.Len() > 0 {
			now = ends[0].at
		}
		if more && (now < 0 || next.Submit < now) {
			now = next.Submit
		}
		for ends.Len() > 0 && ends[0].at == now {
			e := heap.Pop(&ends).(bareEnd)
			free += e.procs
			running[e.id].procs = 0
		}
		// Compact the running list now and then: ended jobs leave holes.
		if len(running) > 2*ends.Len()+64 {
			running = compactRunning(running, &ends)
		}
		for more && next.Submit == now {
			queue = append(queue, queued{seq: seq, procs: max(next.Procs, 1), run: next.Run, walltime: next.Walltime})
			seq++
			if err := pull(); err != nil {
				return err
			}
		}
		// FCFS: from the head while it fits.
		for len(queue) > 0 && queue[0].procs <= free {
			begin(queue[0], now)
			queue = queue[1:]
		}
		if !easy || len(queue) <= 1 {
			continue
		}
		// EASY: the head's shadow time and the extra processors then.
		need := queue[0].procs
		ests = ests[:0]
		for _, e := range running {
			if e.procs > 0 && e.at >= 0 {
				ests = append(ests, e)
			}
		}
		slices.SortFunc(ests, func(a, b bareEst) int { return cmp.Compare(a.at, b.at) })
		shadow, avail := int64(-1), free
		for i := 0; i < len(ests); i++ {
			avail += ests[i].procs
			if avail >= need {
				shadow = ests[i].at
				for i+1 < len(ests) && ests[i+1].at == shadow {
					i++
					avail += ests[i].procs
				}
				break
			}
		}
		extra := avail - need
		kept := queue[:1]
		for _, q := range queue[1:] {
			switch {
			case q.procs > free || q.walltime <= 0:
			case shadow < 0: // the head never fits: nothing to delay
				begin(q, now)
				continue
			case now+q.walltime <= shadow:
				begin(q, now)
				continue
			case q.procs <= extra:
				extra -= q.procs
				begin(q, now)
				continue
			}
			kept = append(kept, q)
		}
		queue = kept
	}
	for _, q := range queue {
		start(q.seq, -1)
	}
	return nil
}

// bareEst is a started job's expected end (start + walltime; -1: none
// known) and its processors (0 once it ended).
type bareEst struct {
	at    int64
	procs int
}

type bareEnd struct {
	at    int64
	procs int
	id    int // index in the running list
}

type bareEnds []bareEnd

func (h bareEnds) Len() int           { return len(h) }
func (h bareEnds) Less(a, b int) bool { return h[a].at < h[b].at }
func (h bareEnds) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *bareEnds) Push(x any)        { *h = append(*h, x.(bareEnd)) }
func (h *bareEnds) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// compactRunning drops the ended jobs (procs 0) of running and renumbers
// the heap's references to the rest.
func compactRunning(running []bareEst, ends *bareEnds) []bareEst {
	renum := make([]int, len(running))
	kept := running[:0]
	for i, e := range running {
		if e.procs > 0 {
			renum[i] = len(kept)
			kept = append(kept, e)
		}
	}
	for i := range *ends {
		(*ends)[i].id = renum[(*ends)[i].id]
	}
	return kept
}

// traceDir holds the reference traces; what uses them skips when missing.
const traceDir = "../../../shared/traces"

// traceFiles lists the SWF traces of traceDir.
func traceFiles(tb testing.TB) []string {
	tb.Helper()
	dir := traceDir
	if d := os.Getenv("PBSSIM_TRACES"); d != "" {
		dir = d // other traces (a held-out one, a synthetic deep queue)
	}
	var out []string
	for _, pat := range []string{"*.swf", "*.swf.gz"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		out = append(out, m...)
	}
	slices.Sort(out)
	if len(out) == 0 {
		tb.Skip("no traces in " + dir)
	}
	return out
}

// traceName is a trace's file name without its extensions.
func traceName(path string) string {
	n := filepath.Base(path)
	n = strings.TrimSuffix(n, ".gz")
	return strings.TrimSuffix(n, ".swf")
}

// openReference opens a trace for a replay under the reference semantics:
// one machine of its MaxProcs processors (the sum of its machines file's
// when it has no MaxProcs line, as trace.OpenStream reads it), jobs of their processors and walltime
// only (no queues, node specs or users), at most limit of them (0: all).
func openReference(tb testing.TB, path string, limit int) (Source, int, func()) {
	tb.Helper()
	s, err := trace.OpenStream(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Normalize(0); err != nil {
		tb.Fatal(err)
	}
	return &referenceJobs{s: s, limit: limit}, s.Workload.MaxProcs, func() { s.Close() }
}

type referenceJobs struct {
	s     *trace.Stream
	limit int
	n     int
}

func (r *referenceJobs) Next() (Job, error) {
	if r.limit > 0 && r.n >= r.limit {
		return Job{}, io.EOF
	}
	j, err := r.s.Next()
	if err != nil {
		return Job{}, err
	}
	r.n++
	return Job{ID: strconv.FormatInt(j.ID, 10), Submit: j.Submit, Run: j.Run, Procs: j.Procs, Walltime: max(j.ReqTime, 0)}, nil
}

// referencePolicy is the FIFO policy with examples/sim/fcfs or
// examples/sim/easy, as pbs_simulate runs them.
func referencePolicy(tb testing.TB, easy bool) core.Policy {
	tb.Helper()
	dir := "../../examples/sim/fcfs"
	if easy {
		dir = "../../examples/sim/easy"
	}
	files, err := privdir.Load(dir, time.UTC)
	if err != nil {
		tb.Fatal(err)
	}
	p := &fifo.Policy{}
	if err := p.Configure(files, core.NopLogger{}); err != nil {
		tb.Fatal(err)
	}
	return p
}

// replayReference replays a trace's first limit jobs (0: all) under the
// reference rules through the simulator or, when bare, the bare loop,
// passing each job's place in the trace and its start to start.
func replayReference(tb testing.TB, path string, limit int, easy, bare bool, start func(seq int, at int64)) {
	tb.Helper()
	src, procs, closeFn := openReference(tb, path, limit)
	defer closeFn()
	var err error
	if bare {
		err = bareReplay(src, procs, easy, start)
	} else {
		err = Run(Config{Nodes: machine(procs), Policy: referencePolicy(tb, easy), Origin: time.Unix(0, 0)}, src,
			func(o Outcome) error {
				start(o.Seq, o.Start)
				return nil
			})
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// startsOf is each job's start (-1: never) in a replayReference, in
// trace order.
func startsOf(tb testing.TB, path string, limit int, easy, bare bool) []int64 {
	tb.Helper()
	var out []int64
	replayReference(tb, path, limit, easy, bare, func(seq int, at int64) { out = setStart(out, seq, at) })
	return out
}

func setStart(s []int64, i int, at int64) []int64 {
	for len(s) <= i {
		s = append(s, -2)
	}
	s[i] = at
	return s
}

// TestReplayMatchesBareLoop: the simulator, with the FIFO policy and the
// sched_priv of examples/sim/fcfs and examples/sim/easy, starts every job
// of each reference trace (a prefix with -short) at the second the bare
// loop does. Together with the golden start times of
// TestReplayStartsUnchanged this pins every scheduling decision a change
// to the simulator's speed must keep.
func TestReplayMatchesBareLoop(t *testing.T) {
	t.Parallel()
	limit := 0
	if testing.Short() {
		limit = 5000
	}
	for _, path := range traceFiles(t) {
		for _, easy := range []bool{false, true} {
			name := traceName(path) + "/" + policyName(easy)
			t.Run(name, func(t *testing.T) {
				n := limit
				if n == 0 && strings.Contains(path, "HPC2N") {
					n = 60000 // the rest adds minutes, not cases
				}
				got, want := startsOf(t, path, n, easy, false), startsOf(t, path, n, easy, true)
				if len(got) != len(want) {
					t.Fatalf("%d jobs replayed, the bare loop %d", len(got), len(want))
				}
				diff := 0
				for i := range got {
					if got[i] != want[i] {
						if diff < 5 {
							t.Errorf("job %d (in trace order) starts at %d, the bare loop's at %d", i, got[i], want[i])
						}
						diff++
					}
				}
				if diff > 0 {
					t.Errorf("%d of %d jobs differ", diff, len(got))
				}
			})
		}
	}
}

func policyName(easy bool) string {
	if easy {
		return "EASY"
	}
	return "FCFS"
}

// BenchmarkReplay replays every reference trace under FCFS and EASY
// through the simulator (ours: the FIFO policy with examples/sim/fcfs or
// easy, as pbs_simulate) and through the bare loop (bare), reading the
// trace with the same stream: BENCHMARKS.md sets the two side by side.
//
//	go test -run '^$' -bench 'Replay/' -benchtime 1x ./sched/sim/
func BenchmarkReplay(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		// pbs_simulate's collector target, for both.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	for _, path := range traceFiles(b) {
		for _, easy := range []bool{false, true} {
			name := traceName(path) + "/" + policyName(easy)
			for _, bare := range []bool{false, true} {
				label := "ours"
				if bare {
					label = "bare"
				}
				b.Run(name+"/"+label, func(b *testing.B) {
					defer reportCPU(b)()
					for range b.N {
						replayReference(b, path, 0, easy, bare, func(int, int64) {})
					}
				})
			}
		}
	}
}

// reportCPU reports, when the returned func is called, the process's cpu
// time (user and system, the collector's included) per iteration: on a
// machine shared with other work it varies less than the elapsed time.
func reportCPU(b *testing.B) func() {
	before := processCPU()
	return func() {
		b.ReportMetric(float64(processCPU()-before)/float64(b.N), "cpu-ns/op")
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
