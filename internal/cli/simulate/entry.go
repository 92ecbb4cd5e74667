// Package simulate is pbs_simulate's logic; cmd/pbs_simulate documents the command.
package simulate

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/trace"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fifo"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
	"github.com/gopbs/gopbs/sched/sim"
)

// Main is pbs_simulate's whole main (cmd/pbs_simulate calls only it): it runs the command
// with the process's arguments and environment and exits the process.
func Main() {
	// A replay builds a world per event and drops it: with the default GC
	// target the collector would run many times per pass. GOGC, when set,
	// decides instead.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: pbs_simulate [--sched-priv DIR] [--procs N | --nodes FILE | --from-server] [--json] [--csv FILE] [--svg DIR] [--format swf|accounting] [--elastic FRACTION] [--express FRACTION] [--seed N] [--reservations FILE] [--compare DIR_A DIR_B] TRACE")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pbs_simulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	privDir := fs.String("sched-priv", "", "sched_priv directory (default: the shipped files)")
	procs := fs.Int("procs", 0, "a machine of N processors (default: the trace's MaxProcs)")
	nodesFile := fs.String("nodes", "", "node layout: lines of \"name ncpus\"")
	fromServer := fs.Bool("from-server", false, "take the node layout from the running server (PBS_CONF_FILE)")
	asJSON := fs.Bool("json", false, "print the metrics as one JSON object")
	csvFile := fs.String("csv", "", "write one row per job to FILE, as jobs finish")
	format := fs.String("format", "", "trace format: swf or accounting (default: by content)")
	compare := fs.Bool("compare", false, "replay with two sched_priv directories, given before TRACE, side by side")
	svg := fs.String("svg", "", "write plots (SVG, and an index.html to open in a browser) to DIR")
	elasticFrac := fs.Float64("elastic", 0, "make this fraction (0 to 1) of the jobs elastic: minimum half their processors, maximum twice, capped by the machine (an SWF trace may give a job's own range in fields 19-20). Speed-up model: work conserved, the remaining run time rescaled at each resize so that run time x processors stays the job's. Lays the machine out in nodes: the header's MaxNodes, or --procs N as N nodes of one processor")
	seed := fs.Uint64("seed", 1, "with --elastic or --express: the seed of the draws of the jobs made elastic or express")
	resvFile := fs.String("reservations", "", "reservations of whole nodes (a site's maintenance), confirmed from the start: lines of \"name start duration nodes [rule]\", start in seconds from the trace's start, duration [[hh:]mm:]ss, nodes \"all\" or names separated by commas, rule a pbs_rsub -r recurrence (UTC, COUNT or UNTIL); EASY starts nothing that would run into a window")
	express := fs.Float64("express", 0, "put this fraction (0 to 1) of the jobs, drawn with --seed, in queue express, whose priority is sched_config's preempt_queue_prio: an express queue, which preempts other jobs when preemptive_sched is on")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs)
			return 0
		}
		fmt.Fprintln(stderr, "pbs_simulate:", err)
		usage(stderr, fs)
		return 2
	}
	rest := fs.Args()
	want := 1
	if *compare {
		want = 3
	}
	if len(rest) != want {
		usage(stderr, fs)
		return 2
	}
	if n := btoi(*procs > 0) + btoi(*nodesFile != "") + btoi(*fromServer); n > 1 {
		fmt.Fprintln(stderr, "pbs_simulate: --procs, --nodes and --from-server exclude each other")
		return 2
	}
	elastic := false
	fs.Visit(func(f *flag.Flag) { elastic = elastic || f.Name == "elastic" })
	if !(*elasticFrac >= 0 && *elasticFrac <= 1) || !(*express >= 0 && *express <= 1) {
		fmt.Fprintln(stderr, "pbs_simulate: --elastic and --express take a fraction from 0 to 1")
		return 2
	}
	path := rest[len(rest)-1]
	if *format == "" {
		*format = sniff(path)
	}
	// The first replay takes the trace opened here, whose header (and
	// machines file) gives the machine; a second one opens it again.
	first, err := openTrace(path, *format, false)
	if err != nil {
		fmt.Fprintln(stderr, "pbs_simulate:", err)
		return 1
	}
	defer first.Close()
	var nodes []*core.Node
	size := 0
	if *fromServer {
		nodes, size, err = serverNodes()
	} else {
		nodes, size, err = machine(first.Workload, *procs, *nodesFile, elastic)
	}
	if err != nil {
		fmt.Fprintln(stderr, "pbs_simulate:", err)
		return 1
	}
	dirs := []string{*privDir}
	if *compare {
		dirs = rest[:2]
	}
	var results []result
	for i, dir := range dirs {
		rp := replayer{path: path, format: *format, nodes: nodes, size: size, stderr: stderr, elastic: *elasticFrac, seed: *seed, resvFile: *resvFile, express: *express}
		if i == 0 {
			rp.opened, rp.csv = first, *csvFile
		}
		r, err := rp.run(dir)
		if err != nil {
			fmt.Fprintln(stderr, "pbs_simulate:", err)
			return 1
		}
		results = append(results, r)
	}
	if *svg != "" {
		if err := writePlots(*svg, results[0].stats); err != nil {
			fmt.Fprintln(stderr, "pbs_simulate:", err)
			return 1
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if len(results) == 1 {
			enc.Encode(results[0].metrics)
		} else {
			enc.Encode(map[string]sim.Metrics{results[0].name: results[0].metrics, results[1].name: results[1].metrics})
		}
		return 0
	}
	fmt.Fprintf(stdout, "trace %s: %d jobs (%d dropped) on %d processors in %d nodes\n", filepath.Base(path), results[0].jobs, results[0].dropped, size, len(nodes))
	report(stdout, results)
	return 0
}

type result struct {
	name    string
	stats   *sim.Stats // with the plots' series, for --svg
	metrics sim.Metrics
	took    time.Duration
	// jobs and dropped are the jobs the trace gave and those Normalize's
	// rules dropped.
	jobs, dropped int
}

// openTrace opens the trace at path for one replay: an SWF trace streamed
// (or read whole, with whole), an accounting log read whole (see
// internal/trace's doc for why).
func openTrace(path, format string, whole bool) (*trace.Stream, error) {
	switch format {
	case "swf":
		if !whole {
			return trace.OpenStream(path)
		}
		w, err := trace.Load(path)
		if err != nil {
			return nil, err
		}
		return trace.MemoryStream(w), nil
	case "accounting":
		rc, err := trace.Open(path)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		w, err := trace.ReadAccounting(rc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return trace.MemoryStream(w), nil
	}
	return nil, fmt.Errorf("--format %q: want swf or accounting", format)
}

// sniff tells accounting logs (lines "MM/DD/YYYY HH:MM:SS;X;...") from SWF.
func sniff(path string) string {
	rc, err := trace.Open(path)
	if err != nil {
		return "swf"
	}
	defer rc.Close()
	buf := make([]byte, 16<<10)
	n, _ := io.ReadFull(rc, buf)
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if line = strings.TrimSpace(line); line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		if len(line) > 20 && line[2] == '/' && line[5] == '/' && line[19] == ';' {
			return "accounting"
		}
		break
	}
	return "swf"
}

// machine is the node layout: --nodes, else --procs or MaxProcs as one
// machine, else the trace's .machines clusters. An elastic replay (split)
// has --procs as nodes of one processor and MaxProcs as MaxNodes nodes
// (see the command's doc).
func machine(w *trace.Workload, procs int, nodesFile string, split bool) ([]*core.Node, int, error) {
	mk := func(name string, ncpus int) *core.Node {
		return &core.Node{Name: name, Host: name, Avail: core.Amounts{"ncpus": float64(ncpus)},
			Props: map[string]string{"host": name, "ncpus": strconv.Itoa(ncpus)}, Assigned: core.Amounts{}, IdealLoad: -1, MaxLoad: -1}
	}
	var nodes []*core.Node
	switch {
	case nodesFile != "":
		b, err := os.ReadFile(nodesFile)
		if err != nil {
			return nil, 0, err
		}
		for i, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || strings.HasPrefix(f[0], "#") {
				continue
			}
			n := 0
			if len(f) == 2 {
				n, err = strconv.Atoi(f[1])
			}
			if len(f) != 2 || err != nil || n <= 0 {
				return nil, 0, fmt.Errorf("%s:%d: want \"name ncpus\"", nodesFile, i+1)
			}
			nodes = append(nodes, mk(f[0], n))
		}
	case procs > 0 && split:
		nodes = numbered(mk, procs, 1)
	case procs > 0:
		nodes = append(nodes, mk("machine", procs))
	case len(w.Machines) > 0:
		for _, m := range w.Machines {
			for i := 0; i < m.Nodes; i++ {
				n := mk(fmt.Sprintf("%s%d", m.Name, i+1), m.CPUsPerNode)
				n.Props[m.Name] = "True"
				nodes = append(nodes, n)
			}
		}
	case w.MaxProcs > 0 && split && w.MaxNodes > 0 && w.MaxProcs%w.MaxNodes == 0:
		nodes = numbered(mk, w.MaxNodes, w.MaxProcs/w.MaxNodes)
	case w.MaxProcs > 0 && split:
		nodes = numbered(mk, w.MaxProcs, 1)
	case w.MaxProcs > 0:
		nodes = append(nodes, mk("machine", w.MaxProcs))
	default:
		return nil, 0, errors.New("the trace does not say how many processors the machine has: give --procs or --nodes")
	}
	size := 0
	for _, n := range nodes {
		size += int(n.Avail["ncpus"])
	}
	if len(nodes) == 0 {
		return nil, 0, errors.New("no nodes")
	}
	return nodes, size, nil
}

// numbered is n nodes of ncpus each, n1, n2, ...
func numbered(mk func(string, int) *core.Node, n, ncpus int) []*core.Node {
	nodes := make([]*core.Node, n)
	for i := range nodes {
		nodes[i] = mk("n"+strconv.Itoa(i+1), ncpus)
	}
	return nodes
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// serverNodes reads the node layout of the running server, as pbsnodes
// does: every node, as if up and empty (a replay starts from nothing).
func serverNodes() ([]*core.Node, int, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, 0, err
	}
	c, err := (&cmdutil.Env{Name: "pbs_simulate", Config: cfg}).Connect()
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	sts, _, err := c.StatusNodes(&proto.StatusRequest{})
	if err != nil {
		return nil, 0, err
	}
	world := sched.NewWorld(time.Now(), proto.Status{}, nil, sts, nil)
	size := 0
	for _, n := range world.Nodes {
		n.State, n.Assigned = 0, core.Amounts{}
		size += int(n.Avail["ncpus"])
	}
	if len(world.Nodes) == 0 {
		return nil, 0, errors.New("the server has no nodes")
	}
	return world.Nodes, size, nil
}

// jobSource is the trace's jobs as the simulator takes them: Normalize's
// jobs, converted one at a time.
type jobSource struct {
	s     *trace.Stream
	path  string          // for errors
	props map[string]bool // the properties some node has
	// elastic is the fraction of the jobs made elastic, drawn by draw
	// (one draw per job, in trace order); size is the machine's
	// processors.
	elastic float64
	draw    *rand.Rand
	size    int
	// express is the fraction of the jobs put in queue express, drawn by
	// expressDraw (a stream of its own: one draw per job).
	express     float64
	expressDraw *rand.Rand
}

func newJobSource(s *trace.Stream, path string, nodes []*core.Node) *jobSource {
	props := map[string]bool{}
	for _, n := range nodes {
		for p := range n.Props {
			props[p] = true
		}
	}
	return &jobSource{s: s, path: path, props: props}
}

// makeElastic has a fraction of the jobs made elastic, drawn with seed,
// on a machine of size processors.
func (js *jobSource) makeElastic(fraction float64, seed uint64, size int) {
	js.elastic, js.draw, js.size = fraction, rand.New(rand.NewPCG(seed, 0)), size
}

func (js *jobSource) Next() (sim.Job, error) {
	j, err := js.s.Next()
	if err == io.EOF {
		return sim.Job{}, err
	}
	if err != nil {
		return sim.Job{}, fmt.Errorf("%s: %w", js.path, err)
	}
	out := sim.Job{ID: strconv.FormatInt(j.ID, 10), Submit: j.Submit, Run: j.Run, Procs: j.Procs,
		Walltime: max(j.ReqTime, 0), User: j.User, Group: j.Group, Queue: j.Queue,
		MinProcs: j.MinProcs, MaxProcs: j.MaxProcs}
	// Every job draws, elastic or not, so that a job's draw depends only
	// on its place in the trace.
	if js.draw != nil && js.draw.Float64() < js.elastic && out.MinProcs == 0 && j.NodeSpec == "" {
		out.MinProcs, out.MaxProcs = (j.Procs+1)/2, max(min(2*j.Procs, js.size), 1)
	}
	if js.expressDraw != nil && js.expressDraw.Float64() < js.express {
		out.Queue = expressQueue
	}
	if j.NodeSpec != "" {
		if sel, err := resc.ParseNodes(torqueSpec(j.NodeSpec, js.props)); err == nil {
			out.Select = sel.String()
		}
	}
	return out, nil
}

// torqueSpec drops the "#excl"-style suffixes of a Torque node spec, and
// the node properties no node of the replayed machine has (a trace names
// properties of its site, such as a city or a file system, that its
// machines file does not describe).
func torqueSpec(s string, props map[string]bool) string {
	var parts []string
	for _, part := range strings.Split(s, "+") {
		part, _, _ = strings.Cut(part, "#")
		var kept []string
		for k, f := range strings.Split(part, ":") {
			if k > 0 && !strings.Contains(f, "=") && !props[f] {
				continue
			}
			kept = append(kept, f)
		}
		parts = append(parts, strings.Join(kept, ":"))
	}
	return strings.Join(parts, "+")
}

// expressQueue is the queue --express puts jobs in.
const expressQueue = "express"

// replayer runs one replay of the trace at path.
type replayer struct {
	path, format string
	nodes        []*core.Node
	size         int
	stderr       io.Writer
	opened       *trace.Stream // the trace, already open (nil: open it)
	csv          string        // write a row per job to this file ("": none)
	elastic      float64       // --elastic
	seed         uint64        // --seed
	resvFile     string        // --reservations
	express      float64       // --express
}

// run replays the trace with the sched_priv of dir ("" for the shipped
// files), streaming it; an SWF trace the stream refuses
// (trace.ErrNotStreamable) is replayed again from memory, from the start.
func (rp *replayer) run(dir string) (result, error) {
	r, err := rp.once(dir, false)
	if errors.Is(err, trace.ErrNotStreamable) {
		fmt.Fprintf(rp.stderr, "pbs_simulate: %v; replaying it from memory\n", err)
		r, err = rp.once(dir, true)
	}
	return r, err
}

func (rp *replayer) once(dir string, whole bool) (result, error) {
	var err error
	src := rp.opened
	rp.opened = nil
	if src == nil || whole {
		if src != nil {
			src.Close()
		}
		if src, err = openTrace(rp.path, rp.format, whole); err != nil {
			return result{}, err
		}
	}
	defer src.Close()
	if err := src.Normalize(rp.size); err != nil {
		return result{}, fmt.Errorf("%s: %w", rp.path, err)
	}
	stats := sim.NewStats(rp.size)
	sink := func(o sim.Outcome) error {
		stats.Add(o)
		return nil
	}
	var rows *csvRows
	if rp.csv != "" {
		if rows, err = createCSV(rp.csv); err != nil {
			return result{}, err
		}
		defer rows.close()
		sink = func(o sim.Outcome) error {
			stats.Add(o)
			return rows.write(o)
		}
	}
	origin := time.Unix(src.Workload.UnixStartTime, 0)
	if src.Workload.UnixStartTime <= 0 {
		origin = time.Date(2000, 1, 3, 0, 0, 0, 0, time.UTC)
	}
	name := dir
	var files *schedpriv.Files
	if dir == "" {
		// The shipped files as pbs_sched installs them in the trace's
		// first year.
		name = "defaults"
		files, err = schedpriv.Defaults(origin.Year(), time.UTC)
	} else {
		files, err = privdir.Load(dir, time.UTC)
	}
	if err != nil {
		return result{}, err
	}
	pol := &fifo.Policy{}
	if err := pol.Configure(files, core.NopLogger{}); err != nil {
		return result{}, err
	}
	cfg := sim.Config{Nodes: rp.nodes, Policy: pol, Origin: origin, ByProcessor: len(rp.nodes) > 1,
		Preempting: files.Config.Prime.PreemptiveSched || files.Config.NonPrime.PreemptiveSched}
	if rp.resvFile != "" {
		f, err := os.Open(rp.resvFile)
		if err != nil {
			return result{}, err
		}
		cfg.Resvs, err = sim.ParseReservations(f, rp.nodes, origin)
		f.Close()
		if err != nil {
			return result{}, fmt.Errorf("%s: %w", rp.resvFile, err)
		}
	}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 && rp.stderr == os.Stderr {
		last := time.Time{}
		cfg.Progress = func(done, live int) {
			if time.Since(last) > 200*time.Millisecond {
				last = time.Now()
				fmt.Fprintf(rp.stderr, "\r%s: %d jobs done, %d queued or running", name, done, live)
			}
		}
	}
	start := time.Now()
	js := newJobSource(src, rp.path, rp.nodes)
	if rp.elastic > 0 {
		js.makeElastic(rp.elastic, rp.seed, rp.size)
	}
	if rp.express > 0 {
		js.express, js.expressDraw = rp.express, rand.New(rand.NewPCG(rp.seed, 1))
		cfg.Priorities = map[string]int64{expressQueue: int64(files.Config.PreemptQueuePrio)}
	}
	err = sim.Run(cfg, js, sink)
	if cfg.Progress != nil {
		fmt.Fprint(rp.stderr, "\r\033[K")
	}
	if err == nil && rows != nil {
		err = rows.close()
	}
	if err != nil {
		return result{}, err
	}
	return result{name: name, stats: stats, metrics: stats.Metrics(), took: time.Since(start),
		jobs: src.Yielded(), dropped: src.Workload.Dropped}, nil
}

func report(w io.Writer, rs []result) {
	row := func(label string, f func(r result) string) {
		fmt.Fprintf(w, "%-22s", label)
		for _, r := range rs {
			fmt.Fprintf(w, " %18s", f(r))
		}
		fmt.Fprintln(w)
	}
	row("sched_priv", func(r result) string { return r.name })
	row("jobs", func(r result) string { return strconv.Itoa(r.metrics.Jobs) })
	row("never started", func(r result) string { return strconv.Itoa(r.metrics.NotStarted) })
	row("average wait (s)", func(r result) string { return fmt.Sprintf("%.0f", r.metrics.AvgWait) })
	row("median wait (s)", func(r result) string { return fmt.Sprintf("%.0f", r.metrics.MedianWait) })
	row("p95 wait (s)", func(r result) string { return fmt.Sprintf("%.0f", r.metrics.P95Wait) })
	row("max wait (s)", func(r result) string { return fmt.Sprintf("%.0f", r.metrics.MaxWait) })
	row("avg bounded slowdown", func(r result) string { return fmt.Sprintf("%.2f", r.metrics.AvgBSLD) })
	row("utilization", func(r result) string { return fmt.Sprintf("%.3f", r.metrics.Utilization) })
	row("jobs preempted", func(r result) string { return strconv.Itoa(r.metrics.Preempted) })
	row("makespan (s)", func(r result) string { return strconv.FormatInt(r.metrics.Makespan, 10) })
	row("Jain fairness (users)", func(r result) string { return fmt.Sprintf("%.3f", r.metrics.Fairness) })
	row("replay time", func(r result) string { return r.took.Round(time.Millisecond).String() })
	for _, r := range rs {
		groups(w, r.name+": busiest users", r.metrics.Users)
		groups(w, r.name+": queues", r.metrics.Queues)
	}
}

func groups(w io.Writer, title string, gs []sim.Group) {
	gs = append([]sim.Group(nil), gs...)
	sort.SliceStable(gs, func(a, b int) bool { return gs[a].Jobs > gs[b].Jobs })
	if len(gs) > 10 {
		gs = gs[:10]
	}
	fmt.Fprintf(w, "\n%s\n%-16s %8s %14s %10s\n", title, "name", "jobs", "avg wait (s)", "avg bsld")
	for _, g := range gs {
		fmt.Fprintf(w, "%-16s %8d %14.0f %10.2f\n", g.Name, g.Jobs, g.AvgWait, g.AvgBSLD)
	}
}

// writePlots writes the replay's plots into dir, creating it.
func writePlots(dir string, stats *sim.Stats) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return sim.WritePlots(stats, func(name string, r io.Reader) error {
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name), b, 0o644)
	})
}

// csvRows writes --csv: a row per job, written as the job's outcome is
// final (see the command's doc for the order), so a replay holds none.
type csvRows struct {
	f   *os.File
	w   *csv.Writer
	rec []string
}

func createCSV(path string) (*csvRows, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	r := &csvRows{f: f, w: csv.NewWriter(f), rec: make([]string, 10)}
	r.w.Write([]string{"job", "submit", "start", "end", "wait", "run", "procs", "walltime", "user", "queue"})
	return r, nil
}

func (r *csvRows) write(o sim.Outcome) error {
	j := o.Job
	wait := ""
	if o.Start >= 0 {
		wait = strconv.FormatInt(o.Start-j.Submit, 10)
	}
	r.rec[0], r.rec[1], r.rec[2], r.rec[3] = j.ID, strconv.FormatInt(j.Submit, 10), strconv.FormatInt(o.Start, 10), strconv.FormatInt(o.End, 10)
	r.rec[4], r.rec[5], r.rec[6], r.rec[7] = wait, strconv.FormatInt(j.Run, 10), strconv.Itoa(j.Procs), strconv.FormatInt(j.Walltime, 10)
	r.rec[8], r.rec[9] = j.User, j.Queue
	return r.w.Write(r.rec)
}

// close flushes and closes the file, once; the first error is returned.
func (r *csvRows) close() error {
	if r.f == nil {
		return nil
	}
	r.w.Flush()
	err := r.w.Error()
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	r.f = nil
	if err != nil {
		return fmt.Errorf("--csv: %w", err)
	}
	return nil
}
