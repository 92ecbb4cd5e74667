package main

import (
	"bytes"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// stormOpts are the knobs of -exp storm; the defaults are issue 24's
// numbers, and the peer script (peer_slurm_storm.sh) takes the same ones
// from its environment.
type stormOpts struct {
	jobs       int           // held jobs in the queue
	pollers    int           // workflow tools polling
	perPoller  int           // jobs each one polls
	interval   time.Duration // between two polls of one poller
	loops      int           // qsub loops
	window     time.Duration // each phase's submissions, over all rounds
	rounds     int           // of our phases, each a share of the window
	runs       int           // runs of ours (and of the peer)
	peer       string        // peer script run after each of ours ("" for none)
	cpuprofile string        // pbs_server -cpuprofile ("" for none)
	control    bool          // also the control phase (pollers that make no request)
}

// The storm's phases, in the order they run on one cluster.
const (
	phaseQuiet   = "quiet"   // the qsub loops alone
	phaseControl = "control" // the loops while pollers run qstat --version (the processes, no request)
	phasePoll    = "poll"    // the loops while pollers run qstat -f
	phaseEvents  = "events"  // the loops while each poller waits in qwait
)

// stormExperiment is issue 24's polling storm as workflow tools make it:
// a queue of held jobs; pollers each asking `qstat -f` of their own jobs
// once a second, as Nextflow's and Snakemake's PBS executors do, while
// loops submit with qsub. It compares the qsub latency under the storm
// with its quiet value, and with the pollers replaced by qwait (one
// subscription to the event stream each, on the same jobs), and measures
// pbs_server's cpu in each phase. A control phase has the pollers start
// `qstat --version` instead, which sends no request: on a machine the
// submitters already keep busy, it tells what the pollers' processes
// cost the submissions apart from what their requests cost the server.
// With a peer script, each run of ours is followed by one of the peer
// (Slurm's squeue -j), on the same machine. The peer runs its phases
// once each, the polling last: its pollers can leave slurmctld stalled
// after they stop.
func stormExperiment(o stormOpts) {
	if o.jobs < o.pollers*o.perPoller {
		log.Fatalf("-storm-jobs %d: fewer than %d pollers of %d jobs", o.jobs, o.pollers, o.perPoller)
	}
	if o.rounds < 1 || o.window/time.Duration(o.rounds) < time.Second {
		log.Fatalf("-storm-rounds %d: want at least one, of a second or more of -storm-window %v", o.rounds, o.window)
	}
	ours := map[string][]float64{}
	peer := map[string][]float64{}
	for r := 0; r < o.runs; r++ {
		settle()
		log.Printf("run %d: ours, load average %s", r+1, loadAvg())
		for k, v := range ourStormRun(o) {
			ours[k] = append(ours[k], v)
		}
		if o.peer == "" {
			continue
		}
		addStormPeer(peer, runPeer(r+1, o.peer,
			"STORM_JOBS="+strconv.Itoa(o.jobs), "STORM_POLLERS="+strconv.Itoa(o.pollers),
			"STORM_PER_POLLER="+strconv.Itoa(o.perPoller), "STORM_INTERVAL_US="+strconv.FormatInt(o.interval.Microseconds(), 10),
			"STORM_LOOPS="+strconv.Itoa(o.loops), "STORM_WINDOW_S="+strconv.Itoa(int(o.window.Seconds())),
			"STORM_CONTROL="+strconv.FormatBool(o.control)))
	}
	printStormTable(o, ours, peer)
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// addStormPeer adds the figures of the peer's "RESULT STORM k=v..." line.
func addStormPeer(peer map[string][]float64, out string) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "RESULT" || f[1] != "STORM" {
			continue
		}
		for _, kv := range f[2:] {
			k, v, _ := strings.Cut(kv, "=")
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				peer[k] = append(peer[k], x)
			}
		}
	}
}

// quantile is the nearest-rank p-quantile of sorted (as the peer script
// computes it: the value at rank ceil(p*n)).
func quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	r := int(math.Ceil(p * float64(len(sorted))))
	return sorted[min(max(r, 1), len(sorted))-1]
}

// ourStormRun runs the phases on one fresh cluster (server, scheduler,
// one mom), in rounds: each round runs every phase for its share of the
// window, so that what else the machine does meanwhile, and what the
// cluster keeps of earlier phases, fall on every phase alike. It returns
// the figures, keyed as the peer's.
func ourStormRun(o stormOpts) map[string]float64 {
	tb := &benchTB{}
	defer tb.cleanup()
	addr := fmt.Sprintf("127.0.0.1:%d", testcluster.FreePort(tb))
	args := []string{"-log-level", "warn"}
	if o.cpuprofile != "" {
		abs, err := filepath.Abs(o.cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		args = append(args, "-cpuprofile", abs)
	}
	// The metrics listener gives the server's own times, and tells when
	// every qwait has subscribed.
	cl, _, work := benchCluster(tb, testcluster.Options{ServerArgs: args, Conf: "PBS_SERVER_METRICS=" + addr + "\n"}, "")
	ids := fillHeld(tb, cl, work, o.jobs)
	url := "http://" + addr + metrics.Path
	type phase struct {
		name string
		load func() func(*phaseStats) // nil: none
	}
	phases := []phase{{name: phaseQuiet}}
	if o.control {
		phases = append(phases, phase{phaseControl, func() func(*phaseStats) {
			return startPollers(tb, cl, o, func(int) []string { return []string{"--version"} })
		}})
	}
	phases = append(phases, phase{phasePoll, func() func(*phaseStats) {
		return startPollers(tb, cl, o, func(p int) []string { return append([]string{"-f"}, ids[p*o.perPoller:(p+1)*o.perPoller]...) })
	}}, phase{phaseEvents, func() func(*phaseStats) { return startWaiters(tb, cl, url, ids, o) }})
	stats := map[string]*phaseStats{}
	for r := 0; r < o.rounds; r++ {
		for _, ph := range phases {
			if stats[ph.name] == nil {
				stats[ph.name] = &phaseStats{}
			}
			stormPhase(tb, cl, work, url, o, ph.load, stats[ph.name])
			log.Printf("round %d of %d: %s done", r+1, o.rounds, ph.name)
		}
	}
	figs := map[string]float64{}
	for name, st := range stats {
		for k, v := range st.figures() {
			figs[name+"_"+k] = v
		}
	}
	keys := make([]string, 0, len(figs))
	for k := range figs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		log.Printf("ours: %s = %g", k, figs[k])
	}
	return figs
}

// phaseStats is one phase's measurements, summed over its rounds.
type phaseStats struct {
	submits    []float64 // each qsub's latency, seconds
	failed     int
	wall, cpu  float64 // seconds of the windows, and pbs_server's cpu seconds in them
	submitReqs reqStats
	statusReqs reqStats
	commits    float64 // the server's store commits, and their seconds
	commitSecs float64
	polls      []float64     // latencies of the polls started in the windows
	pollSecs   float64       // seconds over which those were counted
	pollCPU    time.Duration // the poll processes' cpu, of every poll
	pollRuns   int           // every poll, for pollCPU
}

// figures are the phase's figures, keyed as the peer's after its phase
// name.
func (st *phaseStats) figures() map[string]float64 {
	sort.Float64s(st.submits)
	f := map[string]float64{
		"submit_p50_s": quantile(st.submits, 0.5), "submit_p99_s": quantile(st.submits, 0.99),
		"submit_per_s": float64(len(st.submits)) / st.wall, "submit_failed": float64(st.failed),
		"cpu_per_s":        st.cpu / st.wall,
		"server_submit_ms": st.submitReqs.sum * 1000 / st.submitReqs.n, "server_submit_p99_le_ms": st.submitReqs.p99() * 1000,
	}
	if st.statusReqs.n > 0 {
		f["server_status_ms"] = st.statusReqs.sum * 1000 / st.statusReqs.n
	}
	if st.commits > 0 {
		f["server_commit_ms"] = st.commitSecs * 1000 / st.commits
	}
	if st.pollRuns > 0 {
		sort.Float64s(st.polls)
		f["poll_p50_s"], f["poll_p99_s"] = quantile(st.polls, 0.5), quantile(st.polls, 0.99)
		f["polls_per_s"] = float64(len(st.polls)) / st.pollSecs
		f["poll_client_ms"] = st.pollCPU.Seconds() * 1000 / float64(st.pollRuns)
	}
	return f
}

// stormPhase starts the load (nil: none), runs the qsub loops for the
// round's share of the window and stops the load, adding to st the
// submissions' latencies, pbs_server's cpu, the time the server took
// over the submissions and the status requests meanwhile (its request
// histogram, from scrapes of metricsURL around the window), its store
// commits (each with its fsyncs), and what the load measured. The
// phase's submissions are deleted afterwards, so that every phase starts
// from the same queue.
func stormPhase(tb *benchTB, cl *testcluster.Cluster, work, metricsURL string, o stormOpts, load func() func(*phaseStats), st *phaseStats) {
	var stop func(*phaseStats)
	if load != nil {
		stop = load()
	}
	// Each call timed by bash's clock around it, as the peer times sbatch.
	const body = `end=$2; f=0
while (( ${EPOCHREALTIME/./} < end )); do
  s=${EPOCHREALTIME/./}
  if qsub -h job.sh >>"ids.$1" 2>>storm.err; then e=${EPOCHREALTIME/./}; echo $((e - s)); else f=$((f + 1)); fi
done
echo "FAIL $f"`
	pid := cl.ServerPid()
	m0 := testcluster.MustScrape(tb, metricsURL)
	cpu0 := treeCPU(tb, pid)
	t0 := time.Now()
	end := strconv.FormatInt(nowMicros()+o.window.Microseconds()/int64(o.rounds), 10)
	outs := shellLoops(tb, cl, work, o.loops, body, func(int) []string { return []string{end} })
	st.wall += time.Since(t0).Seconds()
	st.cpu += (treeCPU(tb, pid) - cpu0).Seconds()
	m1 := testcluster.MustScrape(tb, metricsURL)
	if stop != nil {
		stop(st)
	}
	failed := 0
	for _, s := range outs {
		for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
			if n, ok := strings.CutPrefix(line, "FAIL "); ok {
				k, _ := strconv.Atoi(n)
				failed += k
				continue
			}
			us, err := strconv.ParseInt(line, 10, 64)
			if err != nil {
				tb.Fatalf("qsub loop output %q", line)
			}
			st.submits = append(st.submits, float64(us)/1e6)
		}
	}
	if failed > 0 {
		b, _ := os.ReadFile(filepath.Join(work, "storm.err"))
		log.Printf("%d submissions failed: %.300s", failed, b)
	}
	st.failed += failed
	st.submitReqs.add(m0, m1, proto.MsgSubmit)
	st.statusReqs.add(m0, m1, proto.MsgStatusJob)
	st.commits += m1[metrics.ServerCommitSeconds+"_count"] - m0[metrics.ServerCommitSeconds+"_count"]
	st.commitSecs += m1[metrics.ServerCommitSeconds+"_sum"] - m0[metrics.ServerCommitSeconds+"_sum"]
	deletePhaseJobs(tb, cl, work, o.loops)
}

// deletePhaseJobs deletes the jobs the qsub loops submitted (their ids
// are in work/ids.<loop>) and removes the files.
func deletePhaseJobs(tb *benchTB, cl *testcluster.Cluster, work string, loops int) {
	var ids []string
	for i := 0; i < loops; i++ {
		p := filepath.Join(work, "ids."+strconv.Itoa(i))
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			tb.Fatalf("%v", err)
		}
		ids = append(ids, strings.Fields(string(b))...)
		os.Remove(p)
	}
	parallel(8, len(ids), cl, func(c *proto.Client, i int) {
		if err := c.DeleteJob(ids[i], proto.DeleteOptions{}); err != nil {
			tb.Fatalf("qdel %s: %v", ids[i], err)
		}
	})
}

// reqStats is what pbs_server's request histogram says of the requests
// of one type, summed over windows: how many, their total seconds, and
// how many fell at or below each bucket's upper bound.
type reqStats struct {
	n, sum float64
	upTo   map[float64]float64
}

// add adds the requests of type t between two scrapes.
func (r *reqStats) add(before, after testcluster.Samples, t proto.MsgType) {
	name := metrics.ServerRequestSeconds
	r.n += after[testcluster.SeriesKey(name+"_count", "type", t.String())] - before[testcluster.SeriesKey(name+"_count", "type", t.String())]
	r.sum += after[testcluster.SeriesKey(name+"_sum", "type", t.String())] - before[testcluster.SeriesKey(name+"_sum", "type", t.String())]
	if r.upTo == nil {
		r.upTo = map[float64]float64{}
	}
	for k, v := range after {
		if !strings.HasPrefix(k, name+"_bucket{") || !strings.Contains(k, ",type="+t.String()+"}") {
			continue
		}
		le, _, _ := strings.Cut(strings.TrimPrefix(k, name+"_bucket{le="), ",")
		if bound, err := strconv.ParseFloat(le, 64); err == nil {
			r.upTo[bound] += v - before[k]
		}
	}
}

// p99 is the upper bound of the bucket holding the 99th percentile
// (seconds; +Inf when the histogram cannot tell).
func (r *reqStats) p99() float64 {
	p := math.Inf(1)
	for bound, n := range r.upTo {
		if n >= 0.99*r.n && bound < p {
			p = bound
		}
	}
	return p
}

// startPollers starts the pollers: each runs qstat with its args (`qstat
// -f` of its own jobs) every interval (the next one at once when a poll
// took longer), the first ones spread over an interval, as independent
// tools would. It returns once all have polled once; the function it
// returns stops them and adds the polls made meanwhile to a phase.
func startPollers(tb *benchTB, cl *testcluster.Cluster, o stormOpts, args func(poller int) []string) func(*phaseStats) {
	var stopped atomic.Bool
	var warm sync.WaitGroup
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lat []float64
	var clientCPU time.Duration // of every poll, the first ones too
	polls := 0
	var from atomic.Int64 // UnixNano; polls started before it (or while 0) are not counted
	qstat := filepath.Join(cl.Bin, "qstat")
	env := cl.Env()
	t0 := time.Now()
	for p := 0; p < o.pollers; p++ {
		mine := args(p)
		next := t0.Add(time.Duration(p) * o.interval / time.Duration(o.pollers))
		warm.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			var own []float64
			var cpu time.Duration
			n := 0
			for !stopped.Load() {
				time.Sleep(time.Until(next))
				if stopped.Load() {
					break // stopped while asleep: a poll now would fall after the window
				}
				cmd := exec.Command(qstat, mine...)
				cmd.Env = env
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				s := time.Now()
				err := cmd.Run()
				d := time.Since(s)
				if err != nil || out.Len() == 0 {
					tb.Fatalf("qstat %s: %v %s", mine[0], err, errb.String())
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				n++
				if f := from.Load(); f != 0 && s.UnixNano() >= f {
					own = append(own, d.Seconds())
				}
				if first {
					first = false
					warm.Done()
				}
				next = next.Add(o.interval)
				if now := time.Now(); next.Before(now) {
					next = now
				}
			}
			mu.Lock()
			lat = append(lat, own...)
			clientCPU += cpu
			polls += n
			mu.Unlock()
		}()
	}
	warm.Wait()
	from.Store(time.Now().UnixNano())
	return func(st *phaseStats) {
		stopped.Store(true)
		until := time.Now()
		wg.Wait()
		st.polls = append(st.polls, lat...)
		st.pollSecs += until.Sub(time.Unix(0, from.Load())).Seconds()
		st.pollCPU += clientCPU
		st.pollRuns += polls
	}
}

// startWaiters starts a qwait on each poller's jobs instead (one
// subscription each) and returns once every one has subscribed and read
// its jobs' state (qwait subscribes, then reads: the server's count of
// job status requests tells); the function it returns ends them.
func startWaiters(tb *benchTB, cl *testcluster.Cluster, metricsURL string, ids []string, o stormOpts) func(*phaseStats) {
	statusCount := func() float64 {
		s, err := testcluster.Scrape(metricsURL)
		if err != nil {
			tb.Fatalf("scrape: %v", err)
		}
		v, _ := s.Get(metrics.ServerRequestSeconds+"_count", "type", proto.MsgStatusJob.String())
		return v
	}
	before := statusCount()
	cmds := make([]*exec.Cmd, o.pollers)
	exited := make(chan error, o.pollers)
	for p := range cmds {
		cmd := exec.Command(filepath.Join(cl.Bin, "qwait"), ids[p*o.perPoller:(p+1)*o.perPoller]...)
		cmd.Env = cl.Env()
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			tb.Fatalf("qwait: %v", err)
		}
		cmds[p] = cmd
		go func() {
			err := cmd.Wait()
			if err == nil {
				err = fmt.Errorf("exited 0: %s", errb.String())
			} else {
				err = fmt.Errorf("%w: %s", err, errb.String())
			}
			exited <- err
		}()
	}
	testcluster.WaitFor(tb, "every qwait subscribed", 60*time.Second, func() (bool, string) {
		select {
		case err := <-exited:
			tb.Fatalf("a qwait ended before it was stopped: %v", err)
		default:
		}
		n := statusCount() - before
		return n >= float64(o.pollers), fmt.Sprintf("%.0f of %d", n, o.pollers)
	})
	return func(*phaseStats) {
		select {
		case err := <-exited:
			tb.Fatalf("a qwait ended before it was stopped: %v", err)
		default:
		}
		for _, cmd := range cmds {
			cmd.Process.Kill()
		}
		for range cmds {
			<-exited
		}
	}
}

// printStormTable prints, for ours and the peer, each phase's figures
// (medians over the runs): what the submitters and pollers saw, then
// where the time went.
func printStormTable(o stormOpts, ours, peer map[string][]float64) {
	fmt.Printf("\n%d held jobs; %d pollers each asking of its own %d jobs every %v; %d loops submitting held jobs for %v per phase (ours in %d rounds of every phase, the peer's in one). Medians of %d run(s).\n\n",
		o.jobs, o.pollers, o.perPoller, o.interval, o.loops, o.window, o.rounds, o.runs)
	rows := []struct{ system, phase, what string }{
		{"ours", phaseQuiet, "quiet: `qsub -h` loops alone"},
		{"ours", phaseControl, "control: pollers run `qstat --version` (no request)"},
		{"ours", phasePoll, "storm: pollers run `qstat -f`"},
		{"ours", phaseEvents, "pollers replaced by `qwait` (event stream)"},
		{"Slurm", phaseQuiet, "quiet: `sbatch --hold` loops alone"},
		{"Slurm", phaseControl, "control: pollers run `squeue --version` (no request)"},
		{"Slurm", phasePoll, "storm: pollers run `squeue -j`"},
	}
	table := func(header string, cells func(get func(string) (float64, bool), figs map[string][]float64) []string) {
		fmt.Printf("| system | phase | %s |\n|---|---|%s\n", header, strings.Repeat("---|", strings.Count(header, "|")+1))
		for _, r := range rows {
			figs := ours
			if r.system == "Slurm" {
				figs = peer
			}
			get := func(k string) (float64, bool) {
				v := figs[r.phase+"_"+k]
				m := median(v)
				return m, len(v) > 0 && !math.IsNaN(m) && !math.IsInf(m, 0)
			}
			if _, ok := figs[r.phase+"_submit_per_s"]; !ok {
				continue
			}
			fmt.Printf("| %s | %s | %s |\n", r.system, r.what, strings.Join(cells(get, figs), " | "))
		}
		fmt.Println()
	}
	ms := func(get func(string) (float64, bool), k string, scale float64) string {
		if v, ok := get(k); ok {
			if v*scale >= 1000 {
				return fmt.Sprintf("%.2f s", v*scale/1000)
			}
			if v*scale < 10 {
				return fmt.Sprintf("%.2f ms", v*scale)
			}
			return fmt.Sprintf("%.1f ms", v*scale)
		}
		return "-"
	}
	num := func(get func(string) (float64, bool), k string, prec int) string {
		if v, ok := get(k); ok {
			return strconv.FormatFloat(v, 'f', prec, 64)
		}
		return "-"
	}
	table("submit p50 | submit p99 | p99 / quiet p99 | submissions/s (failed) | poll p50 | poll p99 | polls/s", func(get func(string) (float64, bool), figs map[string][]float64) []string {
		ratio := "-"
		if p99, ok := get("submit_p99_s"); ok {
			if q := median(figs[phaseQuiet+"_submit_p99_s"]); q > 0 {
				ratio = fmt.Sprintf("%.2fx", p99/q)
			}
		}
		rate := num(get, "submit_per_s", 0)
		if failed, ok := get("submit_failed"); ok && failed > 0 {
			rate += fmt.Sprintf(" (%.0f failed)", failed)
		}
		return []string{ms(get, "submit_p50_s", 1000), ms(get, "submit_p99_s", 1000), ratio, rate,
			ms(get, "poll_p50_s", 1000), ms(get, "poll_p99_s", 1000), num(get, "polls_per_s", 1)}
	})
	table("server cpu s/s | server time per submission: mean (p99 at most) | server's store commit, mean | server time per job status request (pollers, qwait's first read, pbs_sched) | client cpu per poll", func(get func(string) (float64, bool), _ map[string][]float64) []string {
		sub := ms(get, "server_submit_ms", 1)
		if _, ok := get("server_submit_p99_le_ms"); ok {
			sub += " (" + ms(get, "server_submit_p99_le_ms", 1) + ")"
		}
		return []string{num(get, "cpu_per_s", 3), sub, ms(get, "server_commit_ms", 1), ms(get, "server_status_ms", 1), ms(get, "poll_client_ms", 1)}
	})
}
