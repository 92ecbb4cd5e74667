package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/gopbs/gopbs/resc"
)

var t0 = time.Unix(1_700_000_000, 0)

func node(name string, ncpus float64) *Node {
	return &Node{Name: name, Avail: Amounts{"ncpus": ncpus}, Props: map[string]string{"host": name}, Assigned: Amounts{}, IdealLoad: -1, MaxLoad: -1}
}

func job(id, sel string, wall time.Duration) *Job {
	s, err := resc.ParseSelect(sel)
	if err != nil {
		panic(err)
	}
	return &Job{ID: id, Queue: "workq", State: JobQueued, Select: s, Walltime: wall}
}

// running makes j a job started at start on where ("n1:2,n2:1" style
// pairs of node and cpus).
func running(j *Job, start time.Time, where ...Chunk) *Job {
	j.State, j.Stime, j.Where = JobRunning, start, where
	return j
}

func cpus(node string, n string) Chunk {
	s, _ := resc.ParseSelect("1:ncpus=" + n)
	return Chunk{Node: node, Chunk: s[0]}
}

func nodesOf(where []Chunk) []string {
	var out []string
	for _, c := range where {
		out = append(out, c.Node)
	}
	return out
}

func TestCalendarEarliest(t *testing.T) {
	t.Parallel()
	sec := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	// Two nodes of 2 cpus. A holds n1 until 100 s from now.
	world := func(extra ...*Job) *World {
		jobs := append([]*Job{running(job("A", "1:ncpus=2", 100*time.Second), t0, cpus("n1", "2"))}, extra...)
		return NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}}, []*Node{node("n1", 2), node("n2", 2)}, jobs)
	}
	for _, tc := range []struct {
		name   string
		setup  func(c *Calendar)
		job    *Job
		want   time.Time
		where  []string
		noSlot bool
	}{
		{name: "fits now beside A", job: job("B", "1:ncpus=2", 50*time.Second), want: sec(0), where: []string{"n2"}},
		{name: "needs both nodes: after A", job: job("C", "2:ncpus=2", 50*time.Second), want: sec(100), where: []string{"n1", "n2"}},
		{name: "more than exists", job: job("X", "3:ncpus=2", time.Second), noSlot: true},
		{
			name:  "short job fits before a reservation",
			setup: func(c *Calendar) { c.Add([]Chunk{cpus("n1", "2"), cpus("n2", "2")}, sec(100), sec(300)) },
			job:   job("D", "1:ncpus=1", 50*time.Second), want: sec(0), where: []string{"n2"},
		},
		{
			name:  "long job must not delay the reservation: after it",
			setup: func(c *Calendar) { c.Add([]Chunk{cpus("n1", "2"), cpus("n2", "2")}, sec(100), sec(300)) },
			job:   job("E", "1:ncpus=1", 150*time.Second), want: sec(300), where: []string{"n1"},
		},
		{
			name:  "fits beside the reservation",
			setup: func(c *Calendar) { c.Add([]Chunk{cpus("n1", "2"), cpus("n2", "1")}, sec(100), sec(300)) },
			job:   job("F", "1:ncpus=1", time.Hour), want: sec(0), where: []string{"n2"},
		},
		{
			name:  "no walltime: held forever, so not beside a later reservation; on n1 once A ends",
			setup: func(c *Calendar) { c.Add([]Chunk{cpus("n2", "2")}, sec(100), sec(300)) },
			job:   job("G", "1:ncpus=1", 0), want: sec(100), where: []string{"n1"},
		},
		{
			name:  "a dedicated window is not crossed",
			setup: func(c *Calendar) { c.Block(sec(60), sec(120)) },
			job:   job("H", "1:ncpus=1", 100*time.Second), want: sec(120), where: []string{"n1"},
		},
		{
			name:  "a job that ends before the window starts now",
			setup: func(c *Calendar) { c.Block(sec(60), sec(120)) },
			job:   job("I", "1:ncpus=1", 60*time.Second), want: sec(0), where: []string{"n2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCalendar(world())
			if tc.setup != nil {
				tc.setup(c)
			}
			at, where, ok := c.Earliest(tc.job, t0, false)
			if tc.noSlot {
				if ok {
					t.Fatalf("placed at %v on %v", at.Sub(t0), nodesOf(where))
				}
				return
			}
			if !ok || !at.Equal(tc.want) {
				t.Fatalf("earliest = %v (ok %v), want %v", at.Sub(t0), ok, tc.want.Sub(t0))
			}
			if got := nodesOf(where); len(got) != len(tc.where) || got[0] != tc.where[0] {
				t.Fatalf("where = %v, want %v", got, tc.where)
			}
		})
	}
}

// A running job's expected end: start + walltime, or its queue's
// resources_max.walltime, or forever; one past its walltime ends any
// moment. Assigned resources no running job accounts for are held
// forever.
func TestCalendarRunningJobs(t *testing.T) {
	t.Parallel()
	q := &Queue{Name: "workq", Execution: true, MaxWalltime: 2 * time.Hour}
	pastWall := running(job("P", "1:ncpus=1", 10*time.Second), t0.Add(-time.Minute), cpus("n1", "1"))
	noWall := running(job("W", "1:ncpus=1", 0), t0.Add(-time.Hour), cpus("n2", "1"))
	n3 := node("n3", 1)
	n3.Assigned = Amounts{"ncpus": 1}
	w := NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{q}, []*Node{node("n1", 1), node("n2", 1), n3}, []*Job{pastWall, noWall})
	c := NewCalendar(w)
	probe := job("J", "1:ncpus=1", time.Minute)
	at, where, ok := c.Earliest(probe, t0, false)
	if !ok || !at.Equal(t0.Add(time.Second)) || where[0].Node != "n1" {
		t.Fatalf("after an overrun job: %v on %v (%v)", at.Sub(t0), nodesOf(where), ok)
	}
	// n2 frees at W's start + the queue's 2 h maximum: one hour from now.
	c.Reserve(probe, at, where)
	at, where, ok = c.Earliest(job("K", "1:ncpus=1", time.Minute), t0, false)
	if !ok || !at.Equal(t0.Add(61*time.Second)) || where[0].Node != "n1" {
		t.Fatalf("next slot: %v on %v (%v)", at.Sub(t0), nodesOf(where), ok)
	}
	if _, ok := c.PlaceAt(job("L", "1:host=n3", time.Minute), t0.Add(1000*time.Hour), nil, false); ok {
		t.Fatal("n3's unexplained assignment was not held")
	}
}

func placed(j *Job, p string) *Job {
	pl, err := resc.ParsePlace(p)
	if err != nil {
		panic(err)
	}
	j.Place = pl
	return j
}

// TestCalendarExclusive: a job placed exclusively takes its nodes whole
// (excl) or its hosts' (exclhost), running or reserved, and needs nodes
// nothing else holds over its whole run.
func TestCalendarExclusive(t *testing.T) {
	t.Parallel()
	sec := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	vnode := func(name, host string) *Node {
		n := node(name, 4)
		n.Host = host
		return n
	}
	world := func(jobs ...*Job) *World {
		return NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}},
			[]*Node{vnode("a1", "a"), vnode("a2", "a"), vnode("b1", "b")}, jobs)
	}
	for _, tc := range []struct {
		name  string
		jobs  []*Job
		job   *Job
		want  time.Time
		where []string
	}{
		{name: "beside an excl job: another node", job: job("X", "1:ncpus=1", time.Minute),
			jobs: []*Job{placed(running(job("E", "1:ncpus=1", 100*time.Second), t0, cpus("a1", "1")), "excl")},
			want: sec(0), where: []string{"a2"}},
		{name: "exclhost holds the host's other vnodes", job: job("X", "1:ncpus=1", time.Minute),
			jobs: []*Job{placed(running(job("E", "1:ncpus=1", 100*time.Second), t0, cpus("a1", "1")), "exclhost")},
			want: sec(0), where: []string{"b1"}},
		{name: "excl needs a node nothing runs on", job: placed(job("X", "1:ncpus=1", time.Minute), "excl"),
			jobs: []*Job{running(job("A", "1:ncpus=1", 100*time.Second), t0, cpus("a1", "1"))},
			want: sec(0), where: []string{"a2"}},
		{name: "exclhost waits for a whole host", job: placed(job("X", "2:ncpus=1", time.Minute), "pack:exclhost"),
			jobs: []*Job{running(job("A", "1:ncpus=1", 100*time.Second), t0, cpus("a1", "1")), running(job("B", "1:ncpus=1", 200*time.Second), t0, cpus("b1", "1"))},
			want: sec(100), where: []string{"a1", "a1"}},
	} {
		c := NewCalendar(world(tc.jobs...))
		at, where, ok := c.Earliest(tc.job, t0, false)
		if !ok || !at.Equal(tc.want) || fmt.Sprint(nodesOf(where)) != fmt.Sprint(tc.where) {
			t.Errorf("%s: Earliest = %v %v %v, want %v %v", tc.name, at.Sub(t0), nodesOf(where), ok, tc.want.Sub(t0), tc.where)
		}
	}
	// A reserved excl job keeps its node whole from its start: a job that
	// would run into the reservation goes elsewhere.
	c := NewCalendar(world(running(job("A", "1:ncpus=4", 100*time.Second), t0, cpus("b1", "4")),
		running(job("B", "1:ncpus=4", 100*time.Second), t0, cpus("a2", "4"))))
	res := placed(job("R", "1:ncpus=1", time.Hour), "excl")
	at, where, ok := c.Earliest(res, t0, false)
	if !ok || !at.Equal(t0) || where[0].Node != "a1" {
		t.Fatalf("excl job: %v %v %v", at.Sub(t0), nodesOf(where), ok)
	}
	c.Reserve(res, sec(50), where)
	if w, ok := c.PlaceAt(job("S", "1:ncpus=1", time.Minute), t0, nil, false); ok {
		t.Errorf("a job running into an excl reservation was placed on %v", nodesOf(w))
	}
	if w, ok := c.PlaceAt(job("T", "1:ncpus=1", 30*time.Second), t0, nil, false); !ok || w[0].Node != "a1" {
		t.Errorf("a job that ends before the excl reservation: %v %v", nodesOf(w), ok)
	}
}

// heldWorld is a world of four nodes (two on one host) with running jobs
// ending at many moments, some of them at the same moment, one placed
// exclusively, and each node's Assigned exactly what they hold.
func heldWorld(held bool) *World {
	nodes := []*Node{node("n1", 8), node("n2", 8), node("n3", 4), node("n4", 4)}
	nodes[2].Host, nodes[3].Host = "h", "h"
	jobs := []*Job{
		running(job("A", "1:ncpus=3", 100*time.Second), t0.Add(-10*time.Second), cpus("n1", "3")),
		running(job("B", "1:ncpus=2", 200*time.Second), t0, cpus("n1", "2")),
		running(job("C", "1:ncpus=4", 90*time.Second), t0, cpus("n2", "4")),
		running(job("D", "2:ncpus=2", 300*time.Second), t0, cpus("n2", "2"), cpus("n1", "2")),
		running(job("E", "1:ncpus=1", 90*time.Second), t0, cpus("n2", "1")),
		placed(running(job("X", "1:ncpus=1", 150*time.Second), t0, cpus("n3", "1")), "excl"),
		running(job("F", "1:ncpus=1", 0), t0, cpus("n4", "1")), // no walltime: forever
		job("Q", "1:ncpus=1", time.Minute),                     // queued
	}
	for _, j := range jobs {
		for _, ch := range j.Where {
			for _, n := range nodes {
				if n.Name == ch.Node {
					for r, v := range ch.Amounts() {
						n.Assigned[r] += v
					}
				}
			}
		}
	}
	w := NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}}, nodes, jobs)
	w.HeldByRunning = held
	return w
}

// A world whose Assigned is what its running jobs hold (a simulator's)
// gets a calendar that answers every question as one built from the jobs
// does: what fits now, the earliest start of jobs of every size, after
// starts and a reservation, and the moments jobs end.
func TestCalendarHeldByRunning(t *testing.T) {
	t.Parallel()
	ask := func(held bool) []answer { return askCalendar(t, NewCalendar(heldWorld(held))) }
	built, held := ask(false), ask(true)
	if fmt.Sprint(built) != fmt.Sprint(held) {
		t.Errorf("calendar of the running jobs:\n%v\nof Assigned (HeldByRunning):\n%v", built, held)
	}
	if fmt.Sprint(built[len(built)-1].Where) != "[90 150 200 300 500 3900]" {
		t.Errorf("end times %v, want each once, in order", built[len(built)-1].Where)
	}
}

// answer is what a calendar said of one question.
type answer struct {
	At    int64
	Where []string
	OK    bool
}

// askCalendar asks c where jobs of every size fit now and earliest,
// starts one, reserves one and asks again, lists the end times and checks
// the usage c caches against its spans.
func askCalendar(t *testing.T, c *Calendar) []answer {
	t.Helper()
	var out []answer
	probe := func(j *Job) {
		w, ok := c.PlaceAt(j, t0, nil, false)
		out = append(out, answer{0, nodesOf(w), ok})
		at, w, ok := c.Earliest(j, t0, false)
		out = append(out, answer{at.Unix() - t0.Unix(), nodesOf(w), ok})
	}
	sizes := []string{"1:ncpus=1", "1:ncpus=3", "1:ncpus=6", "1:ncpus=8", "2:ncpus=4", "3:ncpus=4", "1:ncpus=9"}
	for _, s := range sizes {
		probe(job("P"+s, s, 120*time.Second))
	}
	probe(placed(job("XX", "1:ncpus=1", time.Minute), "exclhost"))
	if w, ok := c.PlaceAt(job("S", "1:ncpus=2", 500*time.Second), t0, nil, false); ok {
		c.Start(job("S", "1:ncpus=2", 500*time.Second), w)
	}
	big := job("R", "2:ncpus=8", time.Hour)
	if at, w, ok := c.Earliest(big, t0, false); ok {
		c.Reserve(big, at, w)
		out = append(out, answer{at.Unix() - t0.Unix(), nodesOf(w), ok})
	}
	for _, s := range sizes {
		probe(job("L"+s, s, 50*time.Second))
		probe(job("M"+s, s, 1000*time.Second))
	}
	var ends []string
	for _, e := range c.endTimes() {
		ends = append(ends, fmt.Sprint(e-t0.Unix()))
	}
	out = append(out, answer{Where: ends})
	// A job started now after all that adds to the usage cached.
	if w, ok := c.PlaceAt(job("T", "1:ncpus=1", 30*time.Second), t0, nil, false); ok {
		c.Start(job("T", "1:ncpus=1", 30*time.Second), w)
	}
	// The usage cached at each moment, kept as spans were added, is
	// what the spans holding that moment add up to.
	for _, cn := range c.nodes {
		for at, u := range cn.usage {
			want := Amounts{}
			for _, s := range cn.spans {
				if s.from <= at && at < s.to {
					for r, v := range s.amt {
						want[r] += v
					}
				}
			}
			for r := range u {
				if u[r] != want[r] {
					t.Errorf("%s at %d: cached usage %v, the spans hold %v", cn.node.Name, at-t0.Unix(), u, want)
				}
			}
		}
	}
	return out
}

// A calendar Reset for a world (as a simulator's Scratch does each pass)
// answers every question as a new calendar of that world does, whatever
// it held and was asked before: more nodes, exclusive jobs, a dedicated
// window, reservations.
func TestCalendarReset(t *testing.T) {
	t.Parallel()
	// other is a world of 12 nodes on 3 hosts, some busy.
	other := func() *World {
		var nodes []*Node
		for i := range 12 {
			n := node(fmt.Sprintf("m%d", i), float64(2+i%3))
			n.Host = fmt.Sprintf("host%d", i%3)
			nodes = append(nodes, n)
		}
		jobs := []*Job{
			running(job("A", "1:ncpus=2", 70*time.Second), t0, cpus("m0", "2")),
			placed(running(job("X", "1:ncpus=1", 40*time.Second), t0, cpus("m4", "1")), "exclhost"),
		}
		return NewWorld(t0.Add(-time.Hour), &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}}, nodes, jobs)
	}
	for _, held := range []bool{false, true} {
		want := askCalendar(t, NewCalendar(heldWorld(held)))
		c := NewCalendar(other())
		c.Block(t0, t0.Add(time.Minute))
		askCalendar(t, c)
		for range 2 {
			c.Reset(heldWorld(held))
			if got := askCalendar(t, c); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("held %v: reset calendar:\n%v\nnew calendar:\n%v", held, got, want)
			}
		}
	}
}

// A calendar reset for a world of the size it had allocates nothing, nor
// does a placement that finds no room.
func TestCalendarResetAllocates(t *testing.T) {
	w := heldWorld(true)
	c := NewCalendar(w)
	askCalendar(t, c)
	big := job("B", "1:ncpus=64", time.Minute)
	if n := testing.AllocsPerRun(20, func() {
		c.Reset(w)
		c.PlaceAt(big, t0, nil, false)
	}); n != 0 {
		t.Errorf("Reset and a failed placement allocate %v times", n)
	}
}

// The usage a calendar works out at a moment, from its usage now or span
// by span, is what the spans holding that moment add up to, at every
// moment where a span starts or ends and beside it, with reservations
// ahead and with a world's running jobs deferred (HeldByRunning) or not.
func TestCalendarUsageAt(t *testing.T) {
	t.Parallel()
	for _, held := range []bool{false, true} {
		n := node("n1", 64)
		var jobs []*Job
		for i := range 12 {
			id := fmt.Sprintf("J%d", i)
			jobs = append(jobs, running(job(id, "1:ncpus=2", time.Duration(10+7*i)*time.Second), t0.Add(-time.Duration(i)*time.Second), cpus("n1", "2")))
			n.Assigned["ncpus"] += 2
		}
		w := NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}}, []*Node{n}, jobs)
		w.HeldByRunning = held
		c := NewCalendar(w)
		c.Reserve(job("R1", "1:ncpus=30", time.Minute), t0.Add(40*time.Second), []Chunk{cpus("n1", "30")})
		c.Reserve(job("R2", "1:ncpus=8", time.Minute), t0.Add(20*time.Second), []Chunk{cpus("n1", "8")})
		c.addDeferred()
		cn := c.nodes[0]
		var moments []int64
		for _, s := range cn.spans {
			for _, m := range []int64{s.from - 1, s.from, s.from + 1, s.to - 1, s.to, s.to + 1} {
				if m >= c.now {
					moments = append(moments, m)
				}
			}
		}
		for _, m := range moments {
			got := Amounts{}
			c.usageAt(cn, m, got)
			want := 0.0
			for _, s := range cn.spans {
				if s.from <= m && m < s.to {
					want += s.amt["ncpus"]
				}
			}
			if got["ncpus"] != want {
				t.Errorf("held %v: usage at %d: %v ncpus, the spans hold %v", held, m-c.now, got["ncpus"], want)
			}
		}
	}
}

// What a node has free over a window is its capacity less the most its
// spans hold at any moment of the window, asked window after window (so
// that an answer kept from the window before is tried), before and after
// a reservation is added.
func TestCalendarFreeOver(t *testing.T) {
	t.Parallel()
	n := node("n1", 64)
	var jobs []*Job
	for i := range 8 {
		jobs = append(jobs, running(job(fmt.Sprintf("J%d", i), "1:ncpus=4", time.Duration(20+10*i)*time.Second), t0, cpus("n1", "4")))
		n.Assigned["ncpus"] += 4
	}
	w := NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}}, []*Node{n}, jobs)
	w.HeldByRunning = true
	c := NewCalendar(w)
	c.Reserve(job("R1", "1:ncpus=40", time.Minute), t0.Add(50*time.Second), []Chunk{cpus("n1", "40")})
	check := func(stage string) {
		c.addDeferred() // the running jobs' spans, for the sums below
		cn := c.nodes[0]
		// Each stage starts and ends with the window [0, 200): the answer
		// kept at the end of one must not stand at the start of the next.
		for _, from := range []int64{0, 0, 10, 10, 49, 50, 120, 0} {
			for _, d := range []int64{200, 1, 30, 49, 50, 51, 55, 30, 1, 200} {
				f, to := c.now+from, c.now+from+d
				peak := 0.0
				for m := f; m < to; m++ {
					u := 0.0
					for _, s := range cn.spans {
						if s.from <= m && m < s.to {
							u += s.amt["ncpus"]
						}
					}
					peak = max(peak, u)
				}
				if got := c.freeOver(cn, f, to)["ncpus"]; got != 64-peak {
					t.Errorf("%s: free over [%d, %d): %v, want %v", stage, from, from+d, got, 64-peak)
				}
			}
		}
	}
	check("one reservation")
	c.Reserve(job("R2", "1:ncpus=10", time.Minute), t0.Add(30*time.Second), []Chunk{cpus("n1", "10")})
	check("two reservations")
	c.Start(job("S", "1:ncpus=2", 100*time.Second), []Chunk{cpus("n1", "2")})
	check("a start")
}
