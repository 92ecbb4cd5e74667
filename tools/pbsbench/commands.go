package main

import (
	"bufio"
	"bytes"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/qsubopt"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// commandsOpts are the knobs of -exp commands; the defaults are those of
// ../shared/bench/peer_slurm.sh, so that both systems run the same loads.
type commandsOpts struct {
	runs        int
	parts       map[string]bool
	peer        string // the peer script to run between our runs ("" for none)
	peerResults string // a file of the peer's RESULT lines to read instead
	b1Secs      int
	b1Loops     int
	b2N         int
	b2Loops     int
	bigCpus     int
	cgroups     string // mom_priv/cgroups to give the mom ("" : none)
	hook        string // a queuejob hook's script to import ("" : none)
	b5Jobs      int
	bigJobs     int
	bigRuns     int
}

// figure is one measured quantity of one run.
type figure struct {
	key   string
	value float64
}

// commandsExperiment runs the peer benchmarks of ../shared/bench/README.md
// (B1 qsub -h rate, B2 end-to-end /bin/true throughput of plain jobs and of
// an array, B5 qstat latency over 10,000 held jobs) against this system's
// binaries from shell loops shaped as the peer script's, plus what only
// the issue asks of us (the array with 64 cpus, 100,000 jobs). With a peer
// script the runs alternate (ours, the peer's, ours, ...), so that both
// sets of figures come from the same stretch of time on this machine.
func commandsExperiment(o commandsOpts) {
	ours := map[string][]float64{}
	peer := map[string][]float64{}
	if o.peerResults != "" {
		b, err := os.ReadFile(o.peerResults)
		if err != nil {
			log.Fatal(err)
		}
		addPeer(peer, string(b))
	}
	for r := 0; r < o.runs; r++ {
		settle()
		for _, f := range ourCommandsRun(o) {
			ours[f.key] = append(ours[f.key], f.value)
		}
		if o.peer != "" {
			addPeer(peer, runPeer(r+1, o.peer))
		}
	}
	printCommandsTable(o, ours, peer)
}

// runPeer runs run's peer script, after settle, with env added to this
// process's environment, and returns what it printed on stdout (copied
// to stderr, with its notes).
func runPeer(run int, script string, env ...string) string {
	settle()
	log.Printf("run %d: peer %s, load average %s", run, script, loadAvg())
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	fmt.Fprint(os.Stderr, string(out))
	if err != nil {
		log.Printf("peer run failed: %v", err)
	}
	return string(out)
}

// settle flushes what the previous system's run left to the disk before
// the next system is measured (the peer's B5 writes 10,000 jobs' state,
// our runs create and delete some 40,000 files), so that neither is
// measured while the other's writes are still going out. Both systems
// get the same pause. It did not remove the spread between runs
// (BENCHMARKS.md, "Commands beside Slurm").
func settle() {
	syscall.Sync()
	time.Sleep(2 * time.Second)
}

// addPeer adds the figures of the peer's RESULT lines in out.
func addPeer(peer map[string][]float64, out string) {
	keys := map[string]string{
		"B1 submit_per_s":               "b1",
		"B2 plain_jobs_per_s":           "b2",
		"B2 array_jobs_per_s":           "b2a",
		"B5 squeue_median_s":            "b5list",
		"B5 scontrol_show_job_median_s": "b5one",
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "RESULT" {
			continue
		}
		for _, kv := range f[2:] {
			k, v, _ := strings.Cut(kv, "=")
			if key, ok := keys[f[1]+" "+k]; ok {
				if x, err := strconv.ParseFloat(v, 64); err == nil {
					peer[key] = append(peer[key], x)
				}
			}
		}
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func runsText(v []float64, prec int) string {
	var parts []string
	for _, x := range v {
		parts = append(parts, strconv.FormatFloat(x, 'f', prec, 64))
	}
	return strings.Join(parts, ", ")
}

// printCommandsTable prints the medians side by side with each target.
func printCommandsTable(o commandsOpts, ours, peer map[string][]float64) {
	type row struct {
		key, what, unit string
		prec            int
		higherBetter    bool
		target          string
	}
	rows := []row{
		{"b1", fmt.Sprintf("B1: %d loops of `qsub -h` / `sbatch --hold` for %d s", o.b1Loops, o.b1Secs), "submissions/s", 0, true, ">= 2x peer"},
		{"b2", fmt.Sprintf("B2: %d `/bin/true` jobs from %d loops, until the queue is empty", o.b2N, o.b2Loops), "jobs/s", 1, true, ">= 2x peer"},
		{"b2a", fmt.Sprintf("B2: one %d-subjob array", o.b2N), "jobs/s", 1, true, ">= 2x peer"},
		{"b2big", fmt.Sprintf("B2: one %d-subjob array, node ncpus = %d", o.b2N, o.bigCpus), "jobs/s", 0, true, ">= 1000"},
		{"b2bigcpu", "B2: the same array, CPU of pbs_mom, its shepherds and the jobs, per subjob", "ms", 2, false, ""},
		{"b5list", fmt.Sprintf("B5: `qstat` / `squeue` of %d held jobs", o.b5Jobs), "s", 3, false, "<= peer / 2"},
		{"b5one", "B5: `qstat -f` / `scontrol show job` of one", "s", 3, false, "<= peer"},
		{"biglist", fmt.Sprintf("`qstat` of %d held jobs, p99 of %d", o.bigJobs, o.bigRuns), "s", 3, false, "< 0.5"},
		{"bigrss", fmt.Sprintf("pbs_server RSS per held job (%d jobs)", o.bigJobs), "KiB", 1, false, ""},
	}
	fmt.Printf("\n| measure | unit | ours: median (runs) | peer: median (runs) | ours / peer | target |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if len(ours[r.key]) == 0 && len(peer[r.key]) == 0 {
			continue
		}
		om, pm := median(ours[r.key]), median(peer[r.key])
		ratio := ""
		if len(ours[r.key]) > 0 && len(peer[r.key]) > 0 && pm > 0 {
			ratio = fmt.Sprintf("%.2fx", om/pm)
		}
		pt := "-"
		if len(peer[r.key]) > 0 {
			pt = fmt.Sprintf("%s (%s)", strconv.FormatFloat(pm, 'f', r.prec, 64), runsText(peer[r.key], r.prec))
		}
		fmt.Printf("| %s | %s | %s (%s) | %s | %s | %s |\n", r.what, r.unit, strconv.FormatFloat(om, 'f', r.prec, 64), runsText(ours[r.key], r.prec), pt, ratio, r.target)
	}
}

// ourCommandsRun is one run of every selected part, each on a fresh
// cluster (server, scheduler, one mom).
func ourCommandsRun(o commandsOpts) []figure {
	var out []figure
	if o.parts["b1"] {
		out = append(out, benchB1(o)...)
	}
	if o.parts["b2"] {
		out = append(out, benchB2(o)...)
	}
	if o.parts["b5"] {
		out = append(out, benchB5(o, o.b5Jobs, 5, "b5list", "b5one")...)
	}
	if o.parts["big"] {
		out = append(out, benchB5(o, o.bigJobs, o.bigRuns, "biglist", "")...)
	}
	for _, f := range out {
		log.Printf("ours: %s = %g", f.key, f.value)
	}
	return out
}

// commandsCluster is a fresh cluster with pbs_sched and one mom, and a
// work directory holding the job script the loops submit.
func commandsCluster(tb *benchTB, o commandsOpts) (*testcluster.Cluster, string, string) {
	cl, node, work := benchCluster(tb, testcluster.Options{ServerArgs: []string{"-log-level", "warn"}}, o.cgroups)
	if o.hook != "" {
		// Every submission then goes through a site hook (its process
		// forked from the server's python3 zygote).
		cl.MustRun("qmgr", "-c", "create hook bench")
		cl.MustRun("qmgr", "-c", "set hook bench event = queuejob")
		cl.MustRun("qmgr", "-c", "import hook bench application/x-python default "+o.hook)
	}
	return cl, node, work
}

// benchCluster is commandsCluster with the cluster's options given and,
// unless cgroups is "", that mom_priv/cgroups file for the mom.
func benchCluster(tb *benchTB, opts testcluster.Options, cgroups string) (*testcluster.Cluster, string, string) {
	cl := testcluster.New(tb, opts)
	node := "n1"
	var mo testcluster.MomOptions
	if cgroups != "" {
		b, err := os.ReadFile(cgroups)
		if err != nil {
			tb.Fatalf("%v", err)
		}
		mo.Files = map[string]string{"cgroups": string(b)}
	}
	cl.AddMom(node, mo)
	cl.StartScheduler("pbs_sched")
	work := filepath.Join(cl.Home, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		tb.Fatalf("%v", err)
	}
	// sbatch --wrap=true makes a script of its own; ours is a file.
	if err := os.WriteFile(filepath.Join(work, "job.sh"), []byte("#!/bin/sh\ntrue\n"), 0o644); err != nil {
		tb.Fatalf("%v", err)
	}
	return cl, node, work
}

// shellLoops runs loops copies of a bash loop (body gets the loop's index
// as $1 and its other arguments after) in work with the cluster's
// environment and returns their stdouts, as the peer script's loops run.
func shellLoops(tb *benchTB, cl *testcluster.Cluster, work string, loops int, body string, args func(i int) []string) []string {
	outs := make([]string, loops)
	var wg sync.WaitGroup
	for i := 0; i < loops; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := exec.Command("bash", append([]string{"-c", body, "loop", strconv.Itoa(i)}, args(i)...)...)
			cmd.Env = cl.Env()
			cmd.Dir = work
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				tb.Fatalf("loop %d: %v\n%s", i, err, stderr.String())
			}
			outs[i] = string(out)
		}(i)
	}
	wg.Wait()
	return outs
}

func nowMicros() int64 { return time.Now().UnixMicro() }

// benchB1 is B1: loops of `qsub -h job.sh` for b1Secs seconds.
func benchB1(o commandsOpts) []figure {
	tb := &benchTB{}
	defer tb.cleanup()
	cl, _, work := commandsCluster(tb, o)
	const body = `end=$2; n=0; f=0
while (( ${EPOCHREALTIME/./} < end )); do
  if qsub -h job.sh >/dev/null 2>>b1.err; then n=$((n + 1)); else f=$((f + 1)); fi
done
echo "$n $f"`
	t0 := time.Now()
	end := strconv.FormatInt(nowMicros()+int64(o.b1Secs)*1e6, 10)
	outs := shellLoops(tb, cl, work, o.b1Loops, body, func(int) []string { return []string{end} })
	secs := time.Since(t0).Seconds()
	ok, failed := 0, 0
	for _, s := range outs {
		var n, f int
		fmt.Sscan(s, &n, &f)
		ok, failed = ok+n, failed+f
	}
	if failed > 0 {
		b, _ := os.ReadFile(filepath.Join(work, "b1.err"))
		log.Printf("B1: %d submissions failed: %.300s", failed, b)
	}
	log.Printf("B1: %d held jobs in %.2f s", ok, secs)
	return []figure{{"b1", float64(ok) / secs}}
}

// benchB2 is B2: plain /bin/true jobs from loops, then one array, each
// timed from the first submission until qstat lists nothing; then the
// array again with the node's ncpus raised to bigCpus.
func benchB2(o commandsOpts) []figure {
	tb := &benchTB{}
	defer tb.cleanup()
	cl, node, work := commandsCluster(tb, o)
	if err := os.WriteFile(filepath.Join(work, "true.sh"), []byte("#!/bin/sh\n/bin/true\n"), 0o644); err != nil {
		tb.Fatalf("%v", err)
	}
	const body = `for ((k = 0; k < $2; k++)); do qsub true.sh 2>>b2.err || echo FAIL; done`
	per, extra := o.b2N/o.b2Loops, o.b2N%o.b2Loops
	t0 := time.Now()
	outs := shellLoops(tb, cl, work, o.b2Loops, body, func(i int) []string {
		n := per
		if i < extra {
			n++
		}
		return []string{strconv.Itoa(n)}
	})
	waitQstatEmpty(tb, cl, work, 200*time.Second)
	plain := time.Since(t0).Seconds()
	var ids []string
	for _, s := range outs {
		for _, id := range strings.Fields(s) {
			if id == "FAIL" {
				tb.Fatalf("B2: a submission failed")
			}
			ids = append(ids, id)
		}
	}
	checkExitZero(tb, cl, ids)
	log.Printf("B2: %d plain jobs in %.2f s", len(ids), plain)

	array := func() float64 {
		t0 := time.Now()
		r := cl.Run("qsub", "-J", fmt.Sprintf("1-%d", o.b2N), filepath.Join(work, "true.sh"))
		if r.Code != 0 {
			tb.Fatalf("B2 array: %s", r)
		}
		waitQstatEmpty(tb, cl, work, 200*time.Second)
		secs := time.Since(t0).Seconds()
		checkExitZero(tb, cl, []string{strings.TrimSpace(r.Stdout)})
		return secs
	}
	arr := array()
	log.Printf("B2: %d-subjob array in %.2f s", o.b2N, arr)
	cl.MustRun("qmgr", "-c", fmt.Sprintf("set node %s resources_available.ncpus = %d", node, o.bigCpus))
	// The mom reaps its shepherds, which reap their jobs: its own and its
	// children's cpu time is all the node spends on the array, whatever
	// else the machine runs meanwhile.
	mom := cl.Mom(node).Pid()
	cpu0 := treeCPU(tb, mom)
	big := array()
	cpu := treeCPU(tb, mom) - cpu0
	log.Printf("B2: %d-subjob array on %d cpus in %.2f s, %v of the node's cpu", o.b2N, o.bigCpus, big, cpu)
	return []figure{{"b2", float64(len(ids)) / plain}, {"b2a", float64(o.b2N) / arr}, {"b2big", float64(o.b2N) / big},
		{"b2bigcpu", cpu.Seconds() * 1000 / float64(o.b2N)}}
}

// treeCPU is the cpu time of process pid and of the children it reaped
// (utime, stime, cutime and cstime of /proc/<pid>/stat).
func treeCPU(tb *benchTB, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatalf("%v", err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // fields 14-17 of proc(5)
		v, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * time.Second / 100
}

// waitQstatEmpty polls `qstat` every 0.2 s (as the peer polls squeue)
// until it lists nothing.
func waitQstatEmpty(tb *benchTB, cl *testcluster.Cluster, work string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		r := cl.Run("qstat")
		if r.Code == 0 && strings.TrimSpace(r.Stdout) == "" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	tb.Fatalf("qstat still lists jobs after %v:\n%.2000s", limit, cl.Run("qstat").Stdout)
}

// checkExitZero fails unless every job of ids finished with exit status 0.
func checkExitZero(tb *benchTB, cl *testcluster.Cluster, ids []string) {
	c := dialUnix(tb, cl)
	defer c.Close()
	for i := 0; i < len(ids); i += 500 {
		part := ids[i:min(i+500, len(ids))]
		objs, errs, err := c.StatusJobs(&proto.StatusRequest{IDs: part, History: true, Attrs: []string{proto.AttrJobState, proto.AttrExitStatus}})
		if err != nil || len(errs) > 0 || len(objs) != len(part) {
			tb.Fatalf("status of finished jobs: %v %v (%d of %d)", err, errs, len(objs), len(part))
		}
		for _, o := range objs {
			st, _ := o.Get(proto.AttrJobState)
			ex, _ := o.Get(proto.AttrExitStatus)
			if st != "F" || ex != "0" {
				tb.Fatalf("job %s: state %s, exit status %q", o.Name, st, ex)
			}
		}
	}
}

func dialUnix(tb *benchTB, cl *testcluster.Cluster) *proto.Client {
	c, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(cl.Home, "pbs_server.sock")})
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return c
}

// benchB5 fills the queue with n held jobs exactly as `qsub -h job.sh`
// from the work directory would submit them (through the library, to
// fill fast), then times `qstat` runs times and, when oneKey is set,
// `qstat -f` of the middle job 5 times. The listing figure is the median
// for 5 runs, else the 99th percentile (the largest of fewer than 100).
func benchB5(o commandsOpts, n, runs int, listKey, oneKey string) []figure {
	tb := &benchTB{}
	defer tb.cleanup()
	cl, _, work := commandsCluster(tb, o)
	ids := fillHeld(tb, cl, work, n)
	rss := serverRSS(cl)
	list := timeCommand(tb, cl, runs, "qstat")
	figs := []figure{}
	if runs <= 5 {
		figs = append(figs, figure{listKey, median(list)})
	} else {
		sort.Float64s(list)
		figs = append(figs, figure{listKey, list[min(len(list)-1, len(list)*99/100)]}, figure{"bigrss", float64(rss) / 1024 / float64(n)})
		log.Printf("qstat of %d jobs over %d runs: median %.3f s, max %.3f s", n, runs, median(list), list[len(list)-1])
	}
	if oneKey != "" {
		figs = append(figs, figure{oneKey, median(timeCommand(tb, cl, 5, "qstat", "-f", ids[n/2]))})
	}
	return figs
}

// fillHeld fills the queue with n held jobs exactly as `qsub -h job.sh`
// from the work directory would submit them, but through the library, to
// fill fast; it returns their ids in submission order (by sequence
// number).
func fillHeld(tb *benchTB, cl *testcluster.Cluster, work string, n int) []string {
	sub, err := qsubopt.ParseSubmit([]string{"-h", "job.sh"}, qsubopt.Context{
		Environ: cl.Env(), Cwd: work, Host: config.ShortHostname(), Now: time.Now(),
		ReadFile: func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(work, p)) },
	})
	if err != nil {
		tb.Fatalf("%v", err)
	}
	t0 := time.Now()
	ids := make([]string, n)
	parallel(16, n, cl, func(c *proto.Client, i int) {
		id, err := c.Submit(sub.Request)
		if err != nil {
			tb.Fatalf("%v", err)
		}
		ids[i] = id
	})
	log.Printf("%d held jobs submitted in %v", n, time.Since(t0).Round(time.Millisecond))
	sort.Slice(ids, func(a, b int) bool { return testcluster.Seq(ids[a]) < testcluster.Seq(ids[b]) })
	return ids
}

// timeCommand runs a command runs times and returns each wall time.
func timeCommand(tb *benchTB, cl *testcluster.Cluster, runs int, name string, args ...string) []float64 {
	var out []float64
	for i := 0; i < runs; i++ {
		cmd := exec.Command(filepath.Join(cl.Bin, name), args...)
		cmd.Env = cl.Env()
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		t0 := time.Now()
		err := cmd.Run()
		d := time.Since(t0).Seconds()
		if err != nil || stdout.Len() == 0 {
			tb.Fatalf("%s %v: %v", name, args, err)
		}
		out = append(out, d)
	}
	return out
}

// serverRSS is pbs_server's resident set size in bytes.
func serverRSS(cl *testcluster.Cluster) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", cl.ServerPid()))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && k == "VmRSS" {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
