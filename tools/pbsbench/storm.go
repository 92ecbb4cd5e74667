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

	"gopbs/internal/metrics"
	"gopbs/internal/testcluster"
	"gopbs/proto"
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
	window     time.Duration // each phase's submissions
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
// (Slurm's squeue -j), on the same machine.
func stormExperiment(o stormOpts) {
	if o.jobs < o.pollers*o.perPoller {
		log.Fatalf("-storm-jobs %d: fewer than %d pollers of %d jobs", o.jobs, o.pollers, o.perPoller)
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

// loadAvg1 is the load average over the last minute (NaN if unknown).
func loadAvg1() float64 {
	f := strings.Fields(loadAvg())
	if len(f) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
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

// ourStormRun runs the three phases on one fresh cluster (server,
// scheduler, one mom) and returns its figures, keyed as the peer's.
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
	// The metrics listener only tells when every qwait has subscribed.
	cl, _, work := benchCluster(tb, testcluster.Options{ServerArgs: args, Conf: "PBS_SERVER_METRICS=" + addr + "\n"}, "")
	ids := fillHeld(tb, cl, work, o.jobs)
	figs := map[string]float64{}
	add := func(phase string, f map[string]float64) {
		for k, v := range f {
			figs[phase+"_"+k] = v
		}
	}
	url := "http://" + addr + metrics.Path
	add(phaseQuiet, stormPhase(tb, cl, work, url, o, nil))
	if o.control {
		add(phaseControl, stormPhase(tb, cl, work, url, o, func() func() map[string]float64 {
			return startPollers(tb, cl, o, func(int) []string { return []string{"--version"} })
		}))
	}
	add(phasePoll, stormPhase(tb, cl, work, url, o, func() func() map[string]float64 {
		return startPollers(tb, cl, o, func(p int) []string { return append([]string{"-f"}, ids[p*o.perPoller:(p+1)*o.perPoller]...) })
	}))
	add(phaseEvents, stormPhase(tb, cl, work, url, o, func() func() map[string]float64 {
		return startWaiters(tb, cl, url, ids, o)
	}))
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

// stormPhase starts the load (nil: none), runs the qsub loops for the
// window and stops the load; it returns the submissions' latency and
// rate, pbs_server's cpu seconds per second of the window, the time the
// server took over the submissions and the status requests meanwhile
// (its request histogram, from the scrapes of metricsURL around the
// window), the mean time of its store commits (each with its fsyncs),
// and what the load reports. The phase's submissions are deleted
// afterwards, so that every phase starts from the same queue.
func stormPhase(tb *benchTB, cl *testcluster.Cluster, work, metricsURL string, o stormOpts, load func() func() map[string]float64) map[string]float64 {
	load1 := loadAvg1()
	var stop func() map[string]float64
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
	end := strconv.FormatInt(nowMicros()+o.window.Microseconds(), 10)
	outs := shellLoops(tb, cl, work, o.loops, body, func(int) []string { return []string{end} })
	wall := time.Since(t0).Seconds()
	cpu := (treeCPU(tb, pid) - cpu0).Seconds()
	m1 := testcluster.MustScrape(tb, metricsURL)
	f := map[string]float64{}
	if stop != nil {
		f = stop()
	}
	var lat []float64
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
			lat = append(lat, float64(us)/1e6)
		}
	}
	if failed > 0 {
		b, _ := os.ReadFile(filepath.Join(work, "storm.err"))
		log.Printf("%d submissions failed: %.300s", failed, b)
	}
	sort.Float64s(lat)
	f["submit_p50_s"], f["submit_p99_s"] = quantile(lat, 0.5), quantile(lat, 0.99)
	f["submit_per_s"], f["submit_failed"] = float64(len(lat))/wall, float64(failed)
	f["cpu_per_s"] = cpu / wall
	f["load1"] = load1
	n, sum, p99 := requestsBetween(m0, m1, proto.MsgSubmit)
	f["server_submit_ms"], f["server_submit_p99_le_ms"] = sum*1000/n, p99*1000
	if n, sum, _ := requestsBetween(m0, m1, proto.MsgStatusJob); n > 0 {
		f["server_status_ms"] = sum * 1000 / n
	}
	if n := m1[metrics.ServerCommitSeconds+"_count"] - m0[metrics.ServerCommitSeconds+"_count"]; n > 0 {
		f["server_commit_ms"] = (m1[metrics.ServerCommitSeconds+"_sum"] - m0[metrics.ServerCommitSeconds+"_sum"]) * 1000 / n
	}
	deletePhaseJobs(tb, cl, work, o.loops)
	return f
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

// requestsBetween is what pbs_server's request histogram says of the
// requests of type t between two scrapes: how many, their total time, and
// the upper bound of the bucket holding their 99th percentile (seconds).
func requestsBetween(before, after testcluster.Samples, t proto.MsgType) (n, sum, p99 float64) {
	name := metrics.ServerRequestSeconds
	n = after[testcluster.SeriesKey(name+"_count", "type", t.String())] - before[testcluster.SeriesKey(name+"_count", "type", t.String())]
	sum = after[testcluster.SeriesKey(name+"_sum", "type", t.String())] - before[testcluster.SeriesKey(name+"_sum", "type", t.String())]
	p99 = math.Inf(1)
	for k, v := range after {
		if !strings.HasPrefix(k, name+"_bucket{") || !strings.Contains(k, ",type="+t.String()+"}") {
			continue
		}
		le, _, _ := strings.Cut(strings.TrimPrefix(k, name+"_bucket{le="), ",")
		bound, err := strconv.ParseFloat(le, 64)
		if err == nil && v-before[k] >= 0.99*n && bound < p99 {
			p99 = bound
		}
	}
	return n, sum, p99
}

// startPollers starts the pollers: each runs `qstat -f` of its own jobs
// every interval (the next one at once when a poll took longer), the
// first ones spread over an interval, as independent tools would. It
// returns once all have polled once; the function it returns stops them
// and reports the latency and rate of the polls made meanwhile.
func startPollers(tb *benchTB, cl *testcluster.Cluster, o stormOpts, args func(poller int) []string) func() map[string]float64 {
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
	log.Printf("storm: %d pollers of %d jobs each, every %v", o.pollers, o.perPoller, o.interval)
	return func() map[string]float64 {
		stopped.Store(true)
		until := time.Now()
		wg.Wait()
		sort.Float64s(lat)
		return map[string]float64{"poll_p50_s": quantile(lat, 0.5), "poll_p99_s": quantile(lat, 0.99),
			"polls_per_s":    float64(len(lat)) / until.Sub(time.Unix(0, from.Load())).Seconds(),
			"poll_client_ms": clientCPU.Seconds() * 1000 / float64(polls)}
	}
}

// startWaiters starts a qwait on each poller's jobs instead (one
// subscription each) and returns once every one has subscribed and read
// its jobs' state (qwait subscribes, then reads: the server's count of
// job status requests tells); the function it returns ends them.
func startWaiters(tb *benchTB, cl *testcluster.Cluster, metricsURL string, ids []string, o stormOpts) func() map[string]float64 {
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
	log.Printf("storm: %d qwait of %d jobs each", o.pollers, o.perPoller)
	return func() map[string]float64 {
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
		return map[string]float64{}
	}
}

// printStormTable prints, for ours and the peer, each phase's figures
// (medians over the runs): what the submitters and pollers saw, then
// where the time went.
func printStormTable(o stormOpts, ours, peer map[string][]float64) {
	fmt.Printf("\n%d held jobs; %d pollers each asking of its own %d jobs every %v; %d loops submitting held jobs for %v per phase. Medians of %d run(s).\n\n",
		o.jobs, o.pollers, o.perPoller, o.interval, o.loops, o.window, o.runs)
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
	table("submit p50 | submit p99 | p99 / quiet p99 | submissions/s (failed) | poll p50 | poll p99 | polls/s | load (1 min) at the start", func(get func(string) (float64, bool), figs map[string][]float64) []string {
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
			ms(get, "poll_p50_s", 1000), ms(get, "poll_p99_s", 1000), num(get, "polls_per_s", 1), num(get, "load1", 2)}
	})
	table("server cpu s/s | server time per submission: mean (p99 at most) | server's store commit, mean | server time per status request | client cpu per poll", func(get func(string) (float64, bool), _ map[string][]float64) []string {
		sub := ms(get, "server_submit_ms", 1)
		if _, ok := get("server_submit_p99_le_ms"); ok {
			sub += " (" + ms(get, "server_submit_p99_le_ms", 1) + ")"
		}
		return []string{num(get, "cpu_per_s", 3), sub, ms(get, "server_commit_ms", 1), ms(get, "server_status_ms", 1), ms(get, "poll_client_ms", 1)}
	})
}
