package fifo

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/core"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// world builds snapshots for policy tests.
type world struct {
	server proto.Status
	queues []proto.Status
	nodes  []proto.Status
	jobs   []proto.Status
}

func newWorld() *world {
	w := &world{server: proto.Status{Name: "srv"}}
	w.queue("workq", "Execution", true)
	return w
}

func a(name, value string) proto.Attr { return proto.Attr{Name: name, Value: value} }
func r(name, res, value string) proto.Attr {
	return proto.Attr{Name: name, Resource: res, Value: value}
}

func (w *world) queue(name, typ string, started bool, extra ...proto.Attr) *world {
	st := "False"
	if started {
		st = "True"
	}
	w.queues = append(w.queues, proto.Status{Name: name, Attrs: append([]proto.Attr{a("queue_type", typ), a("enabled", "True"), a("started", st)}, extra...)})
	return w
}

func (w *world) node(name string, ncpus int, state string, extra ...proto.Attr) *world {
	w.nodes = append(w.nodes, proto.Status{Name: name, Attrs: append([]proto.Attr{a("state", state),
		r("resources_available", "ncpus", strconv.Itoa(ncpus)), r("resources_available", "mem", "8gb"),
		r("resources_available", "host", name)}, extra...)})
	return w
}

// job adds a job: state, queue, owner, select, then extra attributes.
func (w *world) job(seq int, state, queue, user, sel string, extra ...proto.Attr) *world {
	attrs := []proto.Attr{a("job_state", state), a("queue", queue), a("euser", user), a("egroup", user+"g"),
		a("qtime", strconv.Itoa(1000+seq)), r("Resource_List", "select", sel), r("Resource_List", "place", "free")}
	if n := strings.SplitN(sel, ":ncpus=", 2); len(n) == 2 {
		count, _ := strconv.Atoi(n[0])
		c, _ := strconv.Atoi(strings.SplitN(n[1], ":", 2)[0])
		attrs = append(attrs, r("Resource_List", "ncpus", strconv.Itoa(count*c)), r("Resource_List", "nodect", n[0]))
	}
	w.jobs = append(w.jobs, proto.Status{Name: strconv.Itoa(seq) + ".srv", Attrs: append(attrs, extra...)})
	return w
}

func (w *world) run(in Inputs) *core.Plan {
	return DefaultPipeline().Schedule(sched.NewWorld(now, w.server, w.queues, w.nodes, w.jobs), in)
}

// outcome summarises decisions: "run 1 n1", "comment 2 <text>", "fail 3",
// "reserve 4 n1 +60s".
func outcome(p *core.Plan) []string {
	var out []string
	for _, d := range p.Decisions() {
		id := strings.TrimSuffix(d.Job.ID, ".srv")
		var nodes []string
		for _, c := range d.Where {
			nodes = append(nodes, c.Node)
		}
		switch d.Kind {
		case core.DecideRun:
			out = append(out, "run "+id+" "+strings.Join(nodes, "+"))
		case core.DecideComment:
			out = append(out, "comment "+id+" "+strings.TrimPrefix(d.Text, "Not Running: "))
		case core.DecideFail:
			if d.Keep {
				out = append(out, "never "+id)
			} else {
				out = append(out, "fail "+id)
			}
		case core.DecideHold:
			out = append(out, "hold "+id)
		case core.DecideReserve:
			out = append(out, "reserve "+id+" "+strings.Join(nodes, "+")+" +"+d.Start.Sub(now).String())
		case core.DecideStageIn:
			out = append(out, "stagein "+id+" "+strings.Join(nodes, "+"))
		case core.DecidePreempt:
			out = append(out, "preempt "+id+" "+d.Text+" for "+strings.TrimSuffix(d.For.ID, ".srv"))
		case core.DecideResume:
			out = append(out, "resume "+id+" "+strings.Join(nodes, "+"))
		case core.DecideAccrue:
			if d.Limited {
				out = append(out, "ineligible "+id)
			} else {
				out = append(out, "eligible "+id)
			}
		}
	}
	return out
}

type decideCase struct {
	name string
	w    *world
	in   Inputs
	want []string
}

func decideCases() []decideCase {
	return []decideCase{
		{"fifo fills nodes in order", newWorld().node("n1", 2, "free").node("n2", 2, "free").
			job(1, "Q", "workq", "u", "1:ncpus=2").job(2, "Q", "workq", "u", "1:ncpus=2").job(3, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{}, []string{"run 1 n1", "run 2 n2", "comment 3 " + cNodes}},
		{"server max_running", func() *world {
			w := newWorld().node("n1", 4, "free").job(1, "R", "workq", "u", "1:ncpus=1").job(2, "Q", "workq", "u", "1:ncpus=1")
			w.server.Attrs = append(w.server.Attrs, a("max_running", "1"))
			return w
		}(), Inputs{}, []string{"comment 2 " + cServerLimit}},
		{"queue max_running, user and group limits", newWorld().queue("q1", "Execution", true, a("max_user_run", "1")).node("n1", 8, "free").
			job(1, "R", "q1", "ann", "1:ncpus=1").job(2, "Q", "q1", "ann", "1:ncpus=1").job(3, "Q", "q1", "bob", "1:ncpus=1"),
			Inputs{}, []string{"comment 2 " + cQueueUserLimit, "run 3 n1"}},
		{"stopped queue", newWorld().queue("off", "Execution", false).node("n1", 2, "free").job(1, "Q", "off", "u", "1:ncpus=1"),
			Inputs{}, []string{"comment 1 " + cQueueNotStarted}},
		{"route queue is left alone", newWorld().queue("rq", "Route", true).node("n1", 2, "free").job(1, "Q", "rq", "u", "1:ncpus=1"),
			Inputs{}, nil},
		{"held and running jobs are not tried", newWorld().node("n1", 4, "free").job(1, "H", "workq", "u", "1:ncpus=1").job(2, "R", "workq", "u", "1:ncpus=1"),
			Inputs{}, nil},
		{"down and offline nodes take nothing", newWorld().node("n1", 4, "down").node("n2", 4, "offline").node("n3", 1, "free").
			job(1, "Q", "workq", "u", "1:ncpus=2"), Inputs{}, []string{"comment 1 " + cNodes}},
		{"too big for every node: it stays, saying it can never run", newWorld().node("n1", 4, "free").job(1, "Q", "workq", "u", "1:ncpus=64"),
			Inputs{}, []string{"never 1"}},
		{"nothing deleted while a node is unknown", newWorld().node("n1", 4, "free").node("n2", 4, "state-unknown,down").
			job(1, "Q", "workq", "u", "1:ncpus=64"), Inputs{}, []string{"comment 1 " + cNodes}},
		{"sort by cpus descending", newWorld().node("n1", 4, "free").
			job(1, "Q", "workq", "u", "1:ncpus=1").job(2, "Q", "workq", "u", "1:ncpus=3").job(3, "Q", "workq", "u", "1:ncpus=2"),
			Inputs{Settings: Settings{Sort: []SortKey{{Resource: "ncpus", Descending: true}}}}, []string{"run 2 n1", "comment 3 " + cNodes, "run 1 n1"}},
		{"priority sort", newWorld().node("n1", 1, "free").
			job(1, "Q", "workq", "u", "1:ncpus=1", a("Priority", "1")).job(2, "Q", "workq", "u", "1:ncpus=1", a("Priority", "10")),
			Inputs{Settings: Settings{Sort: []SortKey{{Priority: true, Descending: true}}}}, []string{"run 2 n1", "comment 1 " + cNodes}},
		{"strict fifo stops at the first blocked job", newWorld().node("n1", 2, "free", r("resources_assigned", "ncpus", "1")).
			job(1, "Q", "workq", "u", "1:ncpus=2").job(2, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{Settings: Settings{StrictFIFO: true}}, []string{"comment 1 " + cNodes, "comment 2 " + cStrictFIFO}},
		{"strict fifo keeps the sort's order (shortest_job_first: cput 10, 20, 30 min)", newWorld().node("n1", 1, "free").
			job(1, "Q", "workq", "u", "1:ncpus=1", r("Resource_List", "cput", "1800")).
			job(2, "Q", "workq", "u", "1:ncpus=1", r("Resource_List", "cput", "600")).
			job(3, "Q", "workq", "u", "1:ncpus=1", r("Resource_List", "cput", "1200")),
			Inputs{Settings: Settings{StrictFIFO: true, Sort: []SortKey{{Resource: "cput"}}}},
			[]string{"run 2 n1", "comment 3 " + cNodes, "comment 1 " + cStrictFIFO}},
		{"a job that can never run does not block strict fifo", newWorld().node("n1", 2, "free").
			job(1, "Q", "workq", "u", "1:ncpus=4").job(2, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{Settings: Settings{StrictFIFO: true}}, []string{"never 1", "run 2 n1"}},
		{"by queue order with sorted queues", newWorld().queue("hi", "Execution", true, a("Priority", "10")).node("n1", 1, "free").
			job(1, "Q", "workq", "u", "1:ncpus=1").job(2, "Q", "hi", "u", "1:ncpus=1"),
			Inputs{Settings: Settings{ByQueue: true, SortQueues: true}}, []string{"run 2 n1", "comment 1 " + cNodes}},
		{"round robin alternates queues", newWorld().queue("b", "Execution", true).node("n1", 3, "free").
			job(1, "Q", "workq", "u", "1:ncpus=1").job(2, "Q", "workq", "u", "1:ncpus=1").job(3, "Q", "b", "u", "1:ncpus=1"),
			Inputs{Settings: Settings{RoundRobin: true}}, []string{"run 1 n1", "run 3 n1", "run 2 n1"}},
		{"starving job drains the system", newWorld().node("n1", 4, "free", r("resources_assigned", "ncpus", "2")).node("n2", 1, "free").
			job(1, "Q", "workq", "u", "1:ncpus=1", a("qtime", "100")).job(2, "Q", "workq", "u", "1:ncpus=3", a("qtime", "5")),
			Inputs{Settings: Settings{HelpStarving: true, MaxStarve: time.Hour}}, []string{"comment 2 " + cNodes, "comment 1 " + cStarving}},
		{"dedicated boundary", newWorld().node("n1", 2, "free").
			job(1, "Q", "workq", "u", "1:ncpus=1", r("Resource_List", "walltime", "02:00:00")).
			job(2, "Q", "workq", "u", "1:ncpus=1", r("Resource_List", "walltime", "00:30:00")),
			Inputs{Dedicated: &Window{From: now.Add(time.Hour), To: now.Add(2 * time.Hour)}}, []string{"comment 1 " + cDedBoundary, "run 2 n1"}},
		{"queue resources_available", newWorld().queue("q1", "Execution", true, r("resources_available", "ncpus", "2")).node("n1", 8, "free").
			job(1, "R", "q1", "u", "1:ncpus=2").job(2, "Q", "q1", "u", "1:ncpus=1"),
			Inputs{}, []string{"comment 2 Not enough cpus available"}},
		{"server resources_max is a per-job cap", func() *world {
			w := newWorld().node("n1", 8, "free").job(1, "Q", "workq", "u", "1:ncpus=4").job(2, "Q", "workq", "u", "1:ncpus=2")
			w.server.Attrs = append(w.server.Attrs, r("resources_max", "ncpus", "2"))
			return w
		}(), Inputs{}, []string{"comment 1 Not enough cpus available", "run 2 n1"}},
		{"unchanged comment is not sent again", newWorld().node("n1", 1, "free").
			job(1, "Q", "workq", "u", "1:ncpus=1").job(2, "Q", "workq", "u", "1:ncpus=1", a("comment", notRunning+cNodes)),
			Inputs{}, []string{"run 1 n1"}},
		{"scatter job on two nodes", newWorld().node("n1", 1, "free").node("n2", 1, "free").
			job(1, "Q", "workq", "u", "2:ncpus=1", r("Resource_List", "place", "scatter")), Inputs{}, []string{"run 1 n1+n2"}},
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	for _, tt := range decideCases() {
		t.Run(tt.name, func(t *testing.T) {
			got := outcome(tt.w.run(tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decisions\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestStartedCommentAndStarvingReleased(t *testing.T) {
	t.Parallel()
	w := newWorld().node("n1", 4, "free").
		job(1, "Q", "workq", "u", "1:ncpus=1", a("qtime", "5")).job(2, "Q", "workq", "u", "1:ncpus=1")
	c := w.run(Inputs{Settings: Settings{HelpStarving: true, MaxStarve: time.Hour}})
	got := outcome(c)
	if !reflect.DeepEqual(got, []string{"run 1 n1", "run 2 n1"}) {
		t.Fatalf("a starving job that started must not block the rest: %q", got)
	}
	if d := c.Decisions()[0]; d.Text != "Job started on Sun Nov 22 at 12:00" {
		t.Fatalf("start comment %q", d.Text)
	}
}

// easyWorld is TestEASYBackfill's world (see there).
func easyWorld() *world {
	wall := func(w string) proto.Attr { return r("Resource_List", "walltime", w) }
	return newWorld().node("n1", 2, "free", r("resources_assigned", "ncpus", "1")).
		job(1, "R", "workq", "u", "1:ncpus=1", wall("00:01:30"), a("stime", strconv.FormatInt(now.Unix(), 10)), a("exec_vnode", "(n1:ncpus=1)")).
		job(2, "Q", "workq", "u", "1:ncpus=2", wall("00:01:40")).
		job(3, "Q", "workq", "u", "1:ncpus=1", wall("00:00:20")).
		job(4, "Q", "workq", "u", "1:ncpus=1", wall("00:10:00")).
		job(5, "Q", "workq", "u", "1:ncpus=1")
}

// EASY backfilling, worked by hand: a node of 2 cpus, a 1-cpu job running
// until +90 s. The 2-cpu job cannot start: it reserves the node at +90 s.
// A 1-cpu 20 s job ends before that and starts in the gap; a 1-cpu 10 min
// job would delay the reservation and waits; a job without a walltime is
// never backfilled.
func TestEASYBackfill(t *testing.T) {
	t.Parallel()
	w := easyWorld()
	easy := Settings{Backfill: true, BackfillDepth: 1000}
	got := outcome(w.run(Inputs{Settings: easy}))
	want := []string{"reserve 2 n1 +1m30s", "comment 2 " + cNodes, "run 3 n1", "comment 4 " + cTopJob, "comment 5 " + cNoWalltime}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("EASY\n got %q\nwant %q", got, want)
	}
	// The gap's start is marked a backfill (pbs_sched counts them); a
	// start with nothing reserved ahead is not.
	for _, d := range w.run(Inputs{Settings: easy}).Decisions() {
		if d.Kind == core.DecideRun && !d.Backfill {
			t.Fatalf("job %s started in a gap is not marked a backfill", d.Job.ID)
		}
	}
	for _, d := range w.run(Inputs{}).Decisions() {
		if d.Kind == core.DecideRun && d.Backfill {
			t.Fatalf("job %s started without backfilling is marked a backfill", d.Job.ID)
		}
	}
	// Strict FIFO keeps its meaning: the blocked head takes the
	// reservation and only gaps that cannot delay it are used.
	strict := easy
	strict.StrictFIFO = true
	if got := outcome(w.run(Inputs{Settings: strict})); !reflect.DeepEqual(got, want) {
		t.Fatalf("strict fifo + backfill\n got %q\nwant %q", got, want)
	}
	// Without backfill, plain FIFO starts whatever fits (the big job may
	// starve); strict FIFO starts nothing after it.
	if got := outcome(w.run(Inputs{})); !reflect.DeepEqual(got, []string{"comment 2 " + cNodes, "run 3 n1", "comment 4 " + cNodes, "comment 5 " + cNodes}) {
		t.Fatalf("plain fifo: %q", got)
	}
	if got := outcome(w.run(Inputs{Settings: Settings{StrictFIFO: true}})); !reflect.DeepEqual(got, []string{"comment 2 " + cNodes, "comment 3 " + cStrictFIFO, "comment 4 " + cStrictFIFO, "comment 5 " + cStrictFIFO}) {
		t.Fatalf("strict fifo: %q", got)
	}
	// A job no node could ever hold ends while backfilling too, whether
	// or not it has a walltime or is beyond the lookahead.
	never := easyWorld().job(6, "Q", "workq", "u", "1:ncpus=64")
	if got := outcome(never.run(Inputs{Settings: easy})); !reflect.DeepEqual(got, append(slices.Clone(want), "never 6")) {
		t.Fatalf("a job that can never run, backfilling: %q", got)
	}
	// The lookahead: with backfill_depth 1 only job 3 is considered.
	one := easy
	one.BackfillDepth = 1
	if got := outcome(w.run(Inputs{Settings: one})); !reflect.DeepEqual(got, []string{"reserve 2 n1 +1m30s", "comment 2 " + cNodes, "run 3 n1", "comment 4 " + cTopJob, "comment 5 " + cTopJob}) {
		t.Fatalf("backfill_depth 1: %q", got)
	}
}

// A world whose maker keeps no comments (a simulator's) gets the same
// decisions but for the comments, and none of those: in strict fifo the
// cycle stops at the first blocked job.
func TestNoComments(t *testing.T) {
	t.Parallel()
	cases := append(decideCases(),
		decideCase{name: "EASY", w: easyWorld(), in: Inputs{Settings: Settings{Backfill: true, BackfillDepth: 1000, StrictFIFO: true}}},
		decideCase{name: "strict fifo by queue", w: newWorld().queue("b", "Execution", true).node("n1", 2, "free", r("resources_assigned", "ncpus", "1")).
			job(1, "Q", "workq", "u", "1:ncpus=2").job(2, "Q", "workq", "u", "1:ncpus=1").job(3, "Q", "b", "u", "1:ncpus=1"),
			in: Inputs{Settings: Settings{StrictFIFO: true, ByQueue: true}}})
	for _, tc := range cases {
		loud := outcome(tc.w.run(tc.in))
		world := sched.NewWorld(now, tc.w.server, tc.w.queues, tc.w.nodes, tc.w.jobs)
		world.NoComments = true
		quiet := outcome(DefaultPipeline().Schedule(world, tc.in))
		var want []string
		for _, d := range loud {
			if !strings.HasPrefix(d, "comment ") {
				want = append(want, d)
			}
		}
		if !reflect.DeepEqual(quiet, want) {
			t.Errorf("%s: without comments %q, want %q (with them: %q)", tc.name, quiet, want, loud)
		}
	}
}

// A world that lends its calendar and plan from cycle to cycle
// (World.Scratch, as the simulator's do) gets every decision a world
// without one gets, with one scratch lent to every case in turn, twice:
// each reset after worlds of other nodes, jobs and reservations.
func TestScratchSameDecisions(t *testing.T) {
	t.Parallel()
	cases := append(decideCases(),
		decideCase{name: "EASY", w: easyWorld(), in: Inputs{Settings: Settings{Backfill: true, BackfillDepth: 1000, StrictFIFO: true}}})
	scratch := &core.Scratch{}
	for range 2 {
		for _, tc := range cases {
			fresh := outcome(tc.w.run(tc.in))
			world := sched.NewWorld(now, tc.w.server, tc.w.queues, tc.w.nodes, tc.w.jobs)
			world.Scratch = scratch
			if lent := outcome(DefaultPipeline().Schedule(world, tc.in)); !reflect.DeepEqual(lent, fresh) {
				t.Errorf("%s: with a scratch %q, without %q", tc.name, lent, fresh)
			}
		}
	}
}

// OpenPBS's backfill_depth of the server and queues: how many blocked
// jobs take a reservation. A 4-cpu node, 2 cpus held until +1h; job 2
// (3 cpus, 1h) reserves +1h; job 3 (4 cpus, 1h) cannot start before +2h;
// job 4 (1 cpu, 2h30m) fits now and beside job 2, but would delay job 3.
// With one reservation (the default) job 4 backfills; with the server's
// backfill_depth 2 job 3 reserves +2h too and job 4 waits; with 0 there
// is no backfilling (strict fifo: the queue stops at job 2); a queue's
// own depth counts its jobs over the server's.
func TestBackfillDepthAttribute(t *testing.T) {
	t.Parallel()
	wall := func(w string) proto.Attr { return r("Resource_List", "walltime", w) }
	mk := func(server, queue string) *world {
		w := newWorld()
		if server != "" {
			w.server.Attrs = append(w.server.Attrs, a("backfill_depth", server))
		}
		if queue != "" {
			w.queues[0].Attrs = append(w.queues[0].Attrs, a("backfill_depth", queue))
		}
		return w.node("n1", 4, "free", r("resources_assigned", "ncpus", "2")).
			job(1, "R", "workq", "u", "1:ncpus=2", wall("01:00:00"), a("stime", strconv.FormatInt(now.Unix(), 10)), a("exec_vnode", "(n1:ncpus=2)")).
			job(2, "Q", "workq", "u", "1:ncpus=3", wall("01:00:00")).
			job(3, "Q", "workq", "u", "1:ncpus=4", wall("01:00:00")).
			job(4, "Q", "workq", "u", "1:ncpus=1", wall("02:30:00"))
	}
	easy := Settings{Backfill: true, BackfillDepth: 1000}
	one := []string{"reserve 2 n1 +1h0m0s", "comment 2 " + cNodes, "comment 3 " + cTopJob, "run 4 n1"}
	two := []string{"reserve 2 n1 +1h0m0s", "comment 2 " + cNodes, "reserve 3 n1 +2h0m0s", "comment 3 " + cNodes, "comment 4 " + cTopJob}
	for _, c := range []struct {
		name, server, queue string
		st                  Settings
		want                []string
	}{
		{"default", "", "", easy, one},
		{"server 1", "1", "", easy, one},
		{"server 2", "2", "", easy, two},
		{"server 2 over backfill off", "2", "", Settings{}, two},
		{"queue 2 over server 1", "1", "2", easy, two},
		{"queue 1 over server 2", "2", "1", easy, one},
		{"server 0: no backfilling", "0", "", easy, []string{"comment 2 " + cNodes, "comment 3 " + cNodes, "run 4 n1"}},
		{"server 0, strict fifo", "0", "", Settings{Backfill: true, StrictFIFO: true}, []string{"comment 2 " + cNodes, "comment 3 " + cStrictFIFO, "comment 4 " + cStrictFIFO}},
	} {
		if got := outcome(mk(c.server, c.queue).run(Inputs{Settings: c.st})); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// Plan.StopAt: under strict fifo in queue-time order, a world that keeps
// its jobs so and wants no comments (a simulator's) learns the job the
// cycle stopped at; with backfill or another order, none.
func TestStopAt(t *testing.T) {
	t.Parallel()
	mk := func() *core.World {
		w := newWorld().node("n1", 2, "free", r("resources_assigned", "ncpus", "1")).
			job(1, "R", "workq", "u", "1:ncpus=1", a("stime", strconv.FormatInt(now.Unix(), 10)), a("exec_vnode", "(n1:ncpus=1)")).
			job(2, "Q", "workq", "u", "1:ncpus=2").
			job(3, "Q", "workq", "u", "1:ncpus=1")
		world := sched.NewWorld(now, w.server, w.queues, w.nodes, w.jobs)
		world.Ordered, world.NoComments = true, true
		return world
	}
	p := DefaultPipeline().Schedule(mk(), Inputs{Settings: Settings{StrictFIFO: true}})
	if j := p.StoppedAt(); j == nil || j.ID != "2.srv" {
		t.Errorf("strict fifo stopped at %v, want job 2", j)
	}
	for name, st := range map[string]Settings{
		"backfill":     {StrictFIFO: true, Backfill: true},
		"plain fifo":   {},
		"sorted order": {StrictFIFO: true, Sort: []SortKey{{Resource: "ncpus"}}},
	} {
		if j := DefaultPipeline().Schedule(mk(), Inputs{Settings: st}).StoppedAt(); j != nil {
			t.Errorf("%s: stopped at %s", name, j.ID)
		}
	}
}
