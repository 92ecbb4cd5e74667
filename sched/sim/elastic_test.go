package sim

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/trace"
	"github.com/gopbs/gopbs/sched/core"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// oneCPUNodes is n nodes of one cpu, n1 ... nn.
func oneCPUNodes(n int) []*core.Node {
	out := make([]*core.Node, n)
	for i := range out {
		name := "n" + strconv.Itoa(i+1)
		out[i] = &core.Node{Name: name, Host: name, Avail: core.Amounts{"ncpus": 1}, Props: map[string]string{"host": name}, Assigned: core.Amounts{}, IdealLoad: -1, MaxLoad: -1}
	}
	return out
}

// readJobs reads an SWF file of testdata as a replay takes it.
func readJobs(t *testing.T, name string) ([]Job, int) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := trace.ReadSWF(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Normalize(w, 0); err != nil {
		t.Fatal(err)
	}
	var jobs []Job
	for _, j := range w.Jobs {
		jobs = append(jobs, Job{ID: strconv.FormatInt(j.ID, 10), Submit: j.Submit, Run: j.Run, Procs: j.Procs,
			Walltime: j.ReqTime, User: j.User, MinProcs: j.MinProcs, MaxProcs: j.MaxProcs})
	}
	return jobs, w.MaxProcs
}

// testOrigin is the replays' time 0.
var testOrigin = time.Unix(1_000_000_000, 0)

// events replays jobs on nodes and lists every start, resize and end as
// "time job kind processors/nodes".
func events(t *testing.T, pol core.Policy, nodes []*core.Node, jobs []Job) ([]string, []Outcome) {
	t.Helper()
	var got []string
	cfg := Config{Nodes: nodes, Policy: pol, Origin: testOrigin, ByProcessor: true,
		Events: func(e Event) { got = append(got, e.String()) }}
	outs, err := Replay(cfg, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return got, outs
}

// TestElasticHandWorked replays testdata/elastic.swf (4 nodes of one
// cpu; jobs 2 and 5 elastic) with EASY in queued and in balanced mode
// (graceful shrink, 5 s grace, and immediate), and checks every start,
// grow, shrink and end against the schedule worked out by hand below.
// The work model: job 2 is 200 processor-seconds, job 5 20.
//
// Queued: at 0 job 1 starts on 2, job 2 on the 2 left (as many as are
// free, its range is 1-4): 200/2 = 100 s. At 30 job 1 ends; job 2 grows
// to 4 before job 3 (queued since 20) may start: 140 left / 4 = 35 s, so
// it ends at 65. Jobs 3 and 4 start then (1 + 3); job 5 waits for job
// 3's end at 75 and starts on the 1 free (20 s at 1), grows to 2 at 85
// when job 4 ends (10 left / 2 = 5 s) and ends at 90.
//
// Balanced: job 2 starts at its minimum, 1 (200 s). Job 3 starts at 20
// on the processor left. At 30 jobs 1 and 3 end and job 2 takes the 3
// free (170 left / 4: ends at 73). At 40 job 4 (3) finds no room: job 2
// gives back the 3 nodes above its minimum. Graceful, they free at 45
// (job 2 did 60 more: 110 left on 1), job 4 starts then and ends at 65;
// job 5 starts then at its minimum and job 2 takes the 2 left (90 left
// / 3 = 30 s), then the last one at 85 when job 5 ends (30 left / 4:
// 8 s, rounded up): it ends at 93. Immediate, the nodes free at 40 and
// a second pass at once starts job 4 (ends at 60); job 2 (130 left on
// 1) grows to 3 at 60 (110 left: 37 s) and to 4 at 80 (50 left: 13 s):
// it ends at 93 too.
func TestElasticHandWorked(t *testing.T) {
	t.Parallel()
	jobs, procs := readJobs(t, "elastic.swf")
	if procs != 4 || len(jobs) != 5 || jobs[1].MinProcs != 1 || jobs[1].MaxProcs != 4 {
		t.Fatalf("trace read as %d processors, %+v", procs, jobs)
	}
	easy := settings{StrictFIFO: true, Backfill: true, BackfillDepth: 1000}
	queued := easy
	balanced := easy
	balanced.Balanced, balanced.PriorityBias, balanced.ShrinkGrace = true, "none", 5*time.Second
	immediate := balanced
	immediate.ShrinkImmediate = true
	for _, tc := range []struct {
		name string
		pol  settings
		want []string
	}{
		{"queued", queued, []string{
			"0 1 start 2/2", "0 2 start 2/2",
			"30 1 end", "30 2 grow 4/4",
			"65 2 end", "65 3 start 1/1", "65 4 start 3/3",
			"75 3 end", "75 5 start 1/1",
			"85 4 end", "85 5 grow 2/2",
			"90 5 end",
		}},
		{"balanced, graceful", balanced, []string{
			"0 1 start 2/2", "0 2 start 1/1",
			"20 3 start 1/1",
			"30 1 end", "30 3 end", "30 2 grow 4/4",
			"40 2 shrink-asked 4/4 until 45",
			"45 2 shrink 1/1", "45 4 start 3/3",
			"65 4 end", "65 5 start 1/1", "65 2 grow 3/3",
			"85 5 end", "85 2 grow 4/4",
			"93 2 end",
		}},
		{"balanced, immediate", immediate, []string{
			"0 1 start 2/2", "0 2 start 1/1",
			"20 3 start 1/1",
			"30 1 end", "30 3 end", "30 2 grow 4/4",
			"40 2 shrink 1/1", "40 4 start 3/3",
			"60 4 end", "60 5 start 1/1", "60 2 grow 3/3",
			"80 5 end", "80 2 grow 4/4",
			"93 2 end",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, outs := events(t, tc.pol, oneCPUNodes(4), jobs)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			// The outcomes agree with the events: each job's start and end.
			for _, o := range outs {
				start := fmt.Sprintf("%d %s start", o.Start, o.Job.ID)
				end := fmt.Sprintf("%d %s end", o.End, o.Job.ID)
				if !hasPrefix(got, start) || !hasPrefix(got, end) || o.Elastic != (o.Job.MinProcs > 0) {
					t.Errorf("job %s: outcome start %d end %d elastic %v", o.Job.ID, o.Start, o.End, o.Elastic)
				}
			}
		})
	}
}

func hasPrefix(lines []string, p string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// scripted is a policy that does what its script says at each pass (once
// per instant: a second pass at one instant does nothing) and records the
// instants of its passes.
type scripted struct {
	origin time.Time
	passes []int64
	script map[int64]func(p *core.Plan, job func(string) *core.Job)
}

func (s *scripted) Configure(*schedpriv.Files, core.Logger) error { return nil }

func (s *scripted) Schedule(w *core.World, _ core.Event, _ core.Logger) *core.Plan {
	t := int64(w.Now.Sub(s.origin) / time.Second)
	p := core.NewPlan()
	again := slices.Contains(s.passes, t)
	s.passes = append(s.passes, t)
	if f := s.script[t]; f != nil && !again {
		f(p, func(id string) *core.Job {
			for _, j := range w.Jobs {
				if j.ID == id {
					return j
				}
			}
			return nil
		})
	}
	return p
}

// on is a chunk of j's ranged spec on each node.
func on(j *core.Job, nodes ...string) []core.Chunk {
	var out []core.Chunk
	for _, n := range nodes {
		out = append(out, core.Chunk{Node: n, Chunk: j.Select[0].One()})
	}
	return out
}

// TestElasticResizes: grows and shrinks as the simulator carries them out
// or, as the server would, refuses them, with the work model's ends. Job
// E is elastic 1-2, 200 processor-seconds; jobs submitted at the script's
// instants (never started) make the passes.
func TestElasticResizes(t *testing.T) {
	t.Parallel()
	type script = map[int64]func(p *core.Plan, job func(string) *core.Job)
	run := func(nodes ...string) func(p *core.Plan, job func(string) *core.Job) {
		return func(p *core.Plan, job func(string) *core.Job) { p.Run(job("E"), on(job("E"), nodes...), "") }
	}
	both := func(fs ...func(p *core.Plan, job func(string) *core.Job)) func(p *core.Plan, job func(string) *core.Job) {
		return func(p *core.Plan, job func(string) *core.Job) {
			for _, f := range fs {
				f(p, job)
			}
		}
	}
	grow := func(nodes ...string) func(p *core.Plan, job func(string) *core.Job) {
		return func(p *core.Plan, job func(string) *core.Job) { p.Grow(job("E"), on(job("E"), nodes...)) }
	}
	shrink := func(grace time.Duration, immediate bool, nodes ...string) func(p *core.Plan, job func(string) *core.Job) {
		return func(p *core.Plan, job func(string) *core.Job) {
			p.Shrink(job("E"), on(job("E"), nodes...), grace, immediate)
		}
	}
	for _, tc := range []struct {
		name   string
		script script
		want   []string
		passes []int64
	}{
		{"started on one, grown to two: 10 s at 1, 190 left at 2", script{0: run("n1"), 10: grow("n2")},
			[]string{"0 E start 1/1", "10 E grow 2/2", "105 E end"}, nil},
		{"a grow beyond the maximum is refused", script{0: run("n1"), 10: grow("n2", "n3")},
			[]string{"0 E start 1/1", "200 E end"}, nil},
		{"a shrink of the first node, of a node not held, or below the minimum is refused",
			script{0: run("n1", "n2"), 10: both(shrink(0, true, "n1"), shrink(0, true, "n3"), shrink(0, true, "n2", "n1"))},
			[]string{"0 E start 2/2", "100 E end"}, nil},
		{"immediate: freed at once, and a second pass then", script{0: run("n1", "n2"), 10: shrink(time.Minute, true, "n2")},
			[]string{"0 E start 2/2", "10 E shrink 1/1", "190 E end"}, []int64{0, 10, 10, 20, 90, 190}},
		{"graceful: freed after the grace; a grow or shrink meanwhile is refused",
			script{0: run("n1", "n2"), 10: shrink(30*time.Second, false, "n2"), 20: both(grow("n3"), shrink(0, true, "n2"))},
			[]string{"0 E start 2/2", "10 E shrink-asked 2/2 until 40", "40 E shrink 1/1", "160 E end"}, []int64{0, 10, 20, 40, 90, 160}},
		{"a job that ends during its grace gives nothing back after", script{0: run("n1", "n2"), 90: shrink(30*time.Second, false, "n2")},
			[]string{"0 E start 2/2", "90 E shrink-asked 2/2 until 120", "100 E end"}, nil},
		{"a graceful shrink without grace is immediate", script{0: run("n1", "n2"), 10: shrink(0, false, "n2")},
			[]string{"0 E start 2/2", "10 E shrink 1/1", "190 E end"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := &scripted{origin: testOrigin, script: tc.script}
			jobs := []Job{{ID: "E", Run: 100, Procs: 2, Walltime: 100, MinProcs: 1, MaxProcs: 2}}
			for _, at := range []int64{10, 20, 90} {
				jobs = append(jobs, Job{ID: "x" + strconv.FormatInt(at, 10), Submit: at, Run: 1, Procs: 1})
			}
			all, _ := events(t, pol, oneCPUNodes(4), jobs)
			got := slices.DeleteFunc(all, func(e string) bool { return !strings.Contains(e, " E ") })
			if !slices.Equal(got, tc.want) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
			if tc.passes != nil && !slices.Equal(pol.passes, tc.passes) {
				t.Errorf("passes at %v, want %v", pol.passes, tc.passes)
			}
		})
	}
}

// TestElasticWorkConserved: an elastic job alone on a machine of n nodes
// of one cpu starts (queued mode) on as many as its range and the machine
// allow, and ends when its work (run x processors) is done there, rounded
// up to the second; its walltime is rescaled alike. Its outcome is
// measured from its end.
func TestElasticWorkConserved(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		nodes, procs, min, max int
		run, end               int64
	}{
		{4, 2, 1, 4, 100, 50},  // 200 / 4
		{3, 2, 1, 4, 100, 67},  // 200 / 3 = 66.7
		{8, 4, 2, 8, 10, 5},    // 40 / 8
		{2, 4, 2, 8, 10, 20},   // 40 / 2: at its minimum
		{4, 3, 3, 3, 7, 7},     // a range of one: as rigid
		{4, 2, 1, 4, 0, 0},     // no work
		{1, 1, 1, 2, 100, 100}, // the machine is its minimum
	} {
		name := fmt.Sprintf("%d nodes, %d procs %d-%d, run %d", tc.nodes, tc.procs, tc.min, tc.max, tc.run)
		t.Run(name, func(t *testing.T) {
			jobs := []Job{{ID: "1", Run: tc.run, Procs: tc.procs, Walltime: 2 * tc.run, MinProcs: tc.min, MaxProcs: tc.max}}
			got, outs := events(t, settings{StrictFIFO: true, Backfill: true}, oneCPUNodes(tc.nodes), jobs)
			held := min(tc.max, tc.nodes)
			want := []string{fmt.Sprintf("0 1 start %d/%d", held, held), fmt.Sprintf("%d 1 end", tc.end)}
			if !slices.Equal(got, want) {
				t.Fatalf("events %q, want %q", got, want)
			}
			if o := outs[0]; o.End != tc.end || !o.Elastic {
				t.Fatalf("outcome %+v", o)
			}
			m := Measure(outs, tc.nodes)
			if wantB := max(1, float64(tc.end)/max(float64(tc.run), Tau)); m.AvgBSLD != wantB {
				t.Errorf("bounded slowdown %v, want %v", m.AvgBSLD, wantB)
			}
		})
	}
	// Queued, an elastic job's walltime is its estimate at its minimum.
	c := coreJob(&Job{ID: "1", Procs: 3, Walltime: 100, MinProcs: 2, MaxProcs: 6}, time.Unix(0, 0), true, map[shape]selected{}, nil, nil)
	if c.Walltime != 150*time.Second || c.Select.String() != "2-6:ncpus=1" || c.Totals["ncpus"] != 2 {
		t.Errorf("queued elastic job: walltime %v, select %s, totals %v", c.Walltime, c.Select, c.Totals)
	}
	c = coreJob(&Job{ID: "2", Procs: 3, Walltime: 100}, time.Unix(0, 0), true, map[shape]selected{}, nil, nil)
	if c.Walltime != 100*time.Second || c.Select.String() != "3:ncpus=1" {
		t.Errorf("rigid job by processor: walltime %v, select %s", c.Walltime, c.Select)
	}
}

func TestCeilDiv(t *testing.T) {
	t.Parallel()
	for _, tc := range [][3]int64{{0, 4, 0}, {1, 4, 1}, {4, 4, 1}, {5, 4, 2}, {200, 3, 67}, {-5, 2, -2}, {-4, 2, -2}} {
		if got := ceilDiv(tc[0], tc[1]); got != tc[2] {
			t.Errorf("ceilDiv(%d, %d) = %d, want %d", tc[0], tc[1], got, tc[2])
		}
	}
}
