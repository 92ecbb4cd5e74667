// Command pbsbench measures durable submissions per second against a real
// pbs_server: through the client library (one long-lived connection per
// client) and through the qsub binary (one process per job), with several
// numbers of concurrent clients and optionally a delay added to every
// fsync to model a slower disk. Results print as a Markdown table for
// BENCHMARKS.md.
//
// With -exp metrics it times Prometheus scrapes of a server holding
// 100,000 jobs (PBS_SERVER_METRICS), quiet and while loops submit.
//
// With -exp commands it runs the peer benchmarks of
// ../shared/bench/README.md (qsub -h rate, /bin/true throughput of plain
// jobs and of an array, qstat latency over 10,000 and 100,000 held jobs)
// against this system's commands, alternating with runs of the peer
// script (Slurm), and prints both sets of medians.
//
// With -exp stream it measures how fast a job's end reaches 1,000
// subscribers of the event stream, and the server's cpu time per end.
//
// With -exp storm it runs issue 24's polling storm: held jobs, pollers
// each running `qstat -f` of their own jobs once a second while loops
// submit, then the same with qwait instead of the pollers, with the qsub
// latency and pbs_server's cpu in each phase; then the same storm
// against Slurm (peer_slurm_storm.sh, squeue -j).
//
// With -exp run it measures instead the time from qrun to the job's
// process starting, and the throughput of /bin/true jobs started with
// qrun through several moms on this host.
//
// With -exp tasks it measures task launch in a job on two moms: pbsdsh
// true (one task per node) and pbs_tmrsh n2 true, per call.
//
// Run it from the repository root:
//
//	go run ./tools/pbsbench -jobs 20000 -qsub-jobs 2000
//	go run ./tools/pbsbench -exp run -moms 4 -run-jobs 400
//	go run ./tools/pbsbench -exp commands
//	go run ./tools/pbsbench -exp metrics
//	go run ./tools/pbsbench -exp stream -subscribers 1000
//	go run ./tools/pbsbench -exp storm
//	go run ./tools/pbsbench -exp tasks -task-calls 50
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

func main() {
	jobs := flag.Int("jobs", 20000, "jobs per library run")
	qsubJobs := flag.Int("qsub-jobs", 2000, "jobs per qsub run")
	clients := flag.String("clients", "1,16,64", "comma list of concurrent clients")
	delays := flag.String("fsync-delays", "0,1ms", "comma list of delays added to each fsync")
	via := flag.String("via", "lib,qsub", "comma list of lib and qsub")
	exp := flag.String("exp", "submit", "experiment: submit (durable submissions), run (qrun latency and job throughput), tasks (pbsdsh and pbs_tmrsh latency), sched (scheduling at scale on simulated nodes), metrics (scrapes of a server holding many jobs), storm (qstat -f polling beside submissions, and Slurm's squeue -j), stream (job ends to event stream subscribers) or commands (the peer benchmarks, beside Slurm)")
	subscribers := flag.Int("subscribers", 1000, "stream experiment: subscribers, each following every change")
	streamEnds := flag.Int("stream-ends", 200, "stream experiment: job ends (qdel of held jobs)")
	streamGap := flag.Duration("stream-gap", 20*time.Millisecond, "stream experiment: time between two ends")
	moms := flag.Int("moms", 4, "run experiment: moms (nodes) on this host")
	runJobs := flag.Int("run-jobs", 400, "run experiment: /bin/true jobs for the throughput test")
	samples := flag.Int("samples", 40, "run experiment: qrun-to-start samples")
	taskCalls := flag.Int("task-calls", 50, "tasks experiment: timed calls of each command")
	simNodes := flag.Int("sim-nodes", 50000, "sched experiment: simulated nodes")
	simCpus := flag.Int("sim-cpus", 10, "sched experiment: cpus per simulated node")
	simJobs := flag.Int("sim-jobs", 50000, "sched experiment: one-cpu jobs to place")
	simQueued := flag.Int("sim-queued", 0, "sched experiment: jobs queued afterwards that cannot run")
	mJobs := flag.Int("metrics-jobs", 100000, "metrics experiment: jobs the server holds (a quarter held)")
	mNodes := flag.Int("metrics-nodes", 1000, "metrics experiment: simulated nodes")
	mRunning := flag.Int("metrics-running", 1000, "metrics experiment: jobs started on the nodes, one per node")
	mScrapes := flag.Int("metrics-scrapes", 200, "metrics experiment: scrapes timed, quiet and again under submissions")
	mLoops := flag.Int("metrics-loops", 8, "metrics experiment: loops submitting during the second set of scrapes")
	var co commandsOpts
	parts := flag.String("parts", "b1,b2,b5,big", "commands experiment: comma list of b1, b2, b5 and big (100,000 jobs)")
	flag.IntVar(&co.runs, "runs", 3, "commands experiment: runs of each part (and of the peer)")
	flag.StringVar(&co.peer, "peer", "../shared/bench/peer_slurm.sh", "commands experiment: peer script run after each of our runs (\"\" for none)")
	flag.StringVar(&co.peerResults, "peer-results", "", "commands experiment: file of the peer's RESULT lines, read as well")
	flag.IntVar(&co.b1Secs, "b1-secs", 10, "commands experiment: B1 seconds")
	flag.IntVar(&co.b1Loops, "b1-loops", 16, "commands experiment: B1 loops")
	flag.StringVar(&co.hook, "hook", "", "commands experiment: a queuejob hook script (a file) every submission goes through")
	flag.IntVar(&co.b2N, "b2-n", 1000, "commands experiment: B2 jobs (and array size)")
	flag.IntVar(&co.b2Loops, "b2-loops", 8, "commands experiment: B2 loops")
	flag.IntVar(&co.bigCpus, "big-cpus", 64, "commands experiment: the node's ncpus for the last array")
	flag.StringVar(&co.cgroups, "cgroups", "", "commands experiment: a mom_priv/cgroups file for the mom (jobs confined with cgroups)")
	flag.IntVar(&co.b5Jobs, "b5-jobs", 10000, "commands experiment: B5 held jobs")
	flag.IntVar(&co.bigJobs, "big-jobs", 100000, "commands experiment: held jobs of the large listing")
	flag.IntVar(&co.bigRuns, "big-runs", 100, "commands experiment: qstat runs over the large listing")
	var so stormOpts
	flag.IntVar(&so.jobs, "storm-jobs", 10000, "storm experiment: held jobs in the queue")
	flag.IntVar(&so.pollers, "storm-pollers", 64, "storm experiment: pollers (and qwaits)")
	flag.IntVar(&so.perPoller, "storm-per-poller", 50, "storm experiment: jobs each poller asks of")
	flag.DurationVar(&so.interval, "storm-interval", time.Second, "storm experiment: time between two polls of one poller")
	flag.IntVar(&so.loops, "storm-loops", 8, "storm experiment: loops submitting held jobs")
	flag.DurationVar(&so.window, "storm-window", 20*time.Second, "storm experiment: submissions timed in each phase (whole seconds for the peer)")
	flag.IntVar(&so.rounds, "storm-rounds", 4, "storm experiment: rounds of our phases, each running every phase for its share of the window")
	flag.IntVar(&so.runs, "storm-runs", 1, "storm experiment: runs (each followed by the peer's)")
	flag.StringVar(&so.peer, "storm-peer", "tools/pbsbench/peer_slurm_storm.sh", "storm experiment: peer script run after each of our runs (\"\" for none)")
	flag.BoolVar(&so.control, "storm-control", true, "storm experiment: also a control phase, the pollers running `qstat --version` (their processes without the requests)")
	flag.StringVar(&so.cpuprofile, "storm-cpuprofile", "", "storm experiment: write pbs_server's cpu profile (its whole life) to this file")
	flag.Parse()
	switch *exp {
	case "commands":
		co.parts = map[string]bool{}
		for _, p := range strings.Split(*parts, ",") {
			co.parts[p] = true
		}
		commandsExperiment(co)
		return
	case "run":
		runExperiment(*moms, *runJobs, *samples)
		return
	case "tasks":
		tasksExperiment(*taskCalls)
		return
	case "sched":
		schedExperiment(*simNodes, *simCpus, *simJobs, *simQueued)
		return
	case "metrics":
		metricsExperiment(*mNodes, *mJobs, *mRunning, *mScrapes, *mLoops)
		return
	case "storm":
		stormExperiment(so)
		return
	case "stream":
		streamExperiment(*subscribers, *streamEnds, *streamGap)
		return
	}

	fmt.Printf("| via | fsync delay | clients | jobs | seconds | jobs/s |\n|---|---|---|---|---|---|\n")
	for _, v := range strings.Split(*via, ",") {
		for _, d := range strings.Split(*delays, ",") {
			delay, err := time.ParseDuration(d)
			if err != nil {
				log.Fatalf("bad delay %q: %v", d, err)
			}
			for _, cs := range strings.Split(*clients, ",") {
				c, err := strconv.Atoi(cs)
				if err != nil || c <= 0 {
					log.Fatalf("bad client count %q", cs)
				}
				n := *jobs
				if v == "qsub" {
					n = *qsubJobs
				}
				secs := runOne(v, delay, c, n)
				fmt.Printf("| %s | %v | %d | %d | %.2f | %.0f |\n", v, delay, c, n, secs, float64(n)/secs)
			}
		}
	}
}

// runOne starts a fresh cluster and submits n jobs from c clients.
func runOne(via string, fsyncDelay time.Duration, c, n int) float64 {
	tb := &benchTB{}
	defer tb.cleanup()
	// bbolt syncs twice per commit: model the per-fsync delay on both.
	cl := testcluster.New(tb, testcluster.Options{ServerArgs: []string{"-store-sync-delay", (2 * fsyncDelay).String(), "-log-level", "warn"}})
	socket := filepath.Join(cl.Home, "pbs_server.sock")
	script := []byte("#!/bin/sh\n#PBS -N bench\n/bin/true\n")
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch via {
			case "lib":
				cli, err := proto.Dial(proto.DialOptions{Network: "unix", Address: socket})
				if err != nil {
					log.Fatal(err)
				}
				defer cli.Close()
				for next.Add(1) <= int64(n) {
					if _, err := cli.Submit(&proto.SubmitRequest{Script: script, Attrs: []proto.Attr{{Name: proto.AttrJobName, Value: "bench"}}}); err != nil {
						failed.Add(1)
					}
				}
			case "qsub":
				for next.Add(1) <= int64(n) {
					cmd := exec.Command(filepath.Join(cl.Bin, "qsub"))
					cmd.Env = cl.Env()
					cmd.Stdin = strings.NewReader(string(script))
					if out, err := cmd.Output(); err != nil || len(out) == 0 {
						failed.Add(1)
					}
				}
			default:
				log.Fatalf("unknown -via %q", via)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if f := failed.Load(); f > 0 {
		log.Fatalf("%d submissions failed", f)
	}
	return secs
}

// benchTB lets the test cluster run outside go test. Fatalf stops the
// cluster before the process exits (loops call it from their own
// goroutines, hence the lock).
type benchTB struct {
	mu       sync.Mutex
	cleanups []func()
}

func (b *benchTB) Helper()                           {}
func (b *benchTB) Fatal(args ...any)                 { b.cleanup(); log.Fatal(args...) }
func (b *benchTB) Fatalf(format string, args ...any) { b.cleanup(); log.Fatalf(format, args...) }
func (b *benchTB) Errorf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (b *benchTB) Logf(format string, args ...any)   { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (b *benchTB) Cleanup(f func()) {
	b.mu.Lock()
	b.cleanups = append(b.cleanups, f)
	b.mu.Unlock()
}
func (b *benchTB) Failed() bool { return false }

func (b *benchTB) cleanup() {
	b.mu.Lock()
	cleanups := b.cleanups
	b.cleanups = nil
	b.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
}
