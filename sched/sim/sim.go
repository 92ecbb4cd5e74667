// Package sim replays a workload through a scheduling policy under a
// virtual clock: the same core (package sched/core), the same policy and
// the same sched_priv files as pbs_sched, with jobs that end at start +
// their run time. It is pure: the caller reads the trace and the files
// and writes the results (pbs_simulate).
//
// A replay streams: Run pulls jobs from a Source as the virtual clock
// reaches their submit time and pushes each outcome to a Sink once it is
// final, holding only the jobs queued or running; Stats turns outcomes,
// in any order, into the metrics and plots without keeping them.
//
// Time follows the reference semantics of ../shared/traces/README.md:
// it advances from event to event; at one instant, first every job that
// ends then releases its processors, then every job submitted then joins
// the queue (in trace order), then one scheduling pass runs.
//
// # Elastic jobs
//
// A job whose select has a chunk count range (Job.MinProcs and MaxProcs:
// MinProcs-MaxProcs chunks of one cpu; or a ranged Job.Select) is
// elastic: the policy starts it with any allocation in its range and may
// grow it (core.DecideGrow) or take chunks back (core.DecideShrink) while
// it runs. Its speed follows the work-conserving model of malleable-job
// studies: the job's work is its run time on the processors it was
// measured on (Run x Procs processor-seconds), and it does that work at
// one processor-second per second per processor held, so the remaining
// work is the remaining run time x the processors held, and when the
// allocation changes the remaining run time is rescaled so that the work
// left stays the same (rounded up to the next second: a job ends at
// start + ceil(work / processors) with one allocation throughout). The
// walltime, the user's estimate, is rescaled alike (Walltime x Procs
// processor-seconds): a queued elastic job's core walltime is its
// estimate at its minimum, what the calendar and EASY reservations use,
// and a running one's is how long it has run plus its estimate left at
// its current allocation.
//
// A grow takes effect at once. A shrink gives back every chunk of the
// job on the nodes of its Where: an immediate one (or one without grace)
// at once, a graceful one when its grace is over, the job holding the
// nodes and working on them until then. While a graceful shrink is under
// way the job is being resized and the simulator ignores further grows
// and shrinks of it, as the server refuses them. A grow or shrink the
// server would refuse (beyond the range, of a node the job does not hold
// or its first node) is ignored. At one instant, processors freed by a
// graceful shrink whose grace ends then are freed after the jobs that end
// and before the jobs submitted; a pass that frees processors at once (an
// immediate shrink) is followed at the same instant by another pass, as
// the scheduler's next cycle would follow (at most maxRepasses of them).
// Stats measures an elastic job's bounded slowdown from its response
// time (end - submit) over its run time as given, and its utilization
// from its work.
package sim

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched/core"
)

// Job is one job of a workload: when it is submitted (seconds from the
// start), how long it runs, what it asks for.
type Job struct {
	ID       string
	Submit   int64
	Run      int64 // actual run time, seconds
	Procs    int
	Walltime int64 // requested, seconds; 0 for none
	User     string
	Group    string
	Queue    string // "" for the default queue
	// Select, when set, is the job's request (a PBS select); otherwise
	// one chunk of Procs cpus (Procs chunks of one cpu under
	// Config.ByProcessor), or for an elastic job MinProcs-MaxProcs chunks
	// of one cpu.
	Select string
	// MinProcs and MaxProcs make the job elastic (both > 0, MinProcs <=
	// MaxProcs): it runs on between MinProcs and MaxProcs processors, its
	// work Run x Procs processor-seconds (see the package doc).
	MinProcs, MaxProcs int
}

// Outcome is what happened to one job.
type Outcome struct {
	Job   *Job
	Seq   int   // the job's place in the source, from 0
	Start int64 // -1 when it never started (failed, or still queued at the end)
	End   int64
	Node  string
	// Elastic says the job was elastic: End - Start is then its run
	// time as its allocations made it, not Job.Run.
	Elastic bool
	// Preempted says the job was preempted (preempt.go): Start is its
	// last run's, and End - Start holds the time it spent suspended.
	Preempted bool
}

// Source yields a replay's jobs in trace order: by submit time, ties in
// the order the trace gives them. Next returns io.EOF after the last job;
// any other error ends the replay with it.
type Source interface {
	Next() (Job, error)
}

// Sink takes each job's outcome once it is final: when the job ends,
// when the policy fails it, or at the end of the replay for the jobs that
// never started (in trace order). Jobs that end at one instant come in
// start order. Run keeps nothing of a job once its outcome is sunk; an
// error ends the replay with it.
type Sink func(Outcome) error

// Config is a replay: the machine, the policy (configured by its caller)
// and the virtual time at which the trace starts.
type Config struct {
	Nodes  []*core.Node
	Queues []*core.Queue // nil: an execution queue per queue the trace names
	// Priorities are the priorities of the queues made for the trace's
	// queue names (Queues nil), 0 for those it does not name.
	Priorities map[string]int64
	Policy     core.Policy
	Log        core.Logger // nil: none
	Origin     time.Time   // the trace's time 0 (its UnixStartTime)
	// Progress, when set, is called now and then with the jobs whose
	// outcome is final and the jobs queued or running.
	Progress func(done, live int)
	// ByProcessor has a job without a select ask for Procs chunks of one
	// cpu instead of one chunk of Procs cpus: its processors may spread
	// over nodes, as on a machine of small nodes.
	ByProcessor bool
	// Events, when set, is told of every start, grow, shrink and end.
	Events func(Event)
	// Resvs are reservations confirmed from the start (ParseReservations,
	// resv.go): the policy keeps their nodes free in their windows.
	Resvs []*core.Resv
	// Preempting says the policy may preempt jobs (sched_config's
	// preemptive_sched): a pass then runs at every instant, since a job
	// may start without free room (see preempt.go).
	Preempting bool
}

// Event is a change of a job's allocation, for Config.Events.
type Event struct {
	At    int64 // seconds from the trace's start
	Job   string
	Kind  EventKind
	Procs int // the processors the job holds after the event (0 after its end)
	Nodes int // the nodes it holds them on
	// Until is when a graceful shrink will free the nodes (ShrinkAsked).
	Until int64
}

// EventKind says what an Event is.
type EventKind uint8

// Event kinds.
const (
	EventStart EventKind = iota
	EventGrow
	// EventShrinkAsked: a graceful shrink began; the job holds its
	// processors until Event.Until, when an EventShrink follows.
	EventShrinkAsked
	EventShrink
	EventEnd
)

// String writes e as "time job kind", then for all but an end
// "processors/nodes" held after it, and for a shrink asked "until time".
func (e Event) String() string {
	s := strconv.FormatInt(e.At, 10) + " " + e.Job + " " + e.Kind.String()
	if e.Kind != EventEnd {
		s += " " + strconv.Itoa(e.Procs) + "/" + strconv.Itoa(e.Nodes)
	}
	if e.Kind == EventShrinkAsked {
		s += " until " + strconv.FormatInt(e.Until, 10)
	}
	return s
}

func (k EventKind) String() string {
	return [...]string{"start", "grow", "shrink-asked", "shrink", "end"}[k]
}

// live is a job between its submit and its outcome: the only per-job
// state a replay holds.
type live struct {
	job   Job
	seq   int
	core  *core.Job // &own
	start int64
	own   core.Job // the core's view, made with the rest in one allocation
	el    *elastic // nil for a rigid job
	// endAt is when a rigid job ends, as things stand (-1 while it is
	// off its nodes: preempted); preempted says it ever was (preempt.go).
	endAt     int64
	preempted bool
}

// elastic is the state of an elastic job (see the package doc).
type elastic struct {
	// work and est are the processor-seconds left to do and estimated
	// left as of since; cpus is what the job holds from since on.
	work, est   int64
	since, cpus int64
	// end is when the job ends as things stand; ends holds an entry at
	// each end it ever had, and those that are not end are stale.
	end int64
	// shrinking is set while a graceful shrink is under way.
	shrinking bool
}

// maxRepasses bounds the passes that follow a pass at one instant
// because it freed processors at once.
const maxRepasses = 8

// shrinkDue is a graceful shrink that frees its nodes at at.
type shrinkDue struct {
	at    int64
	l     *live
	nodes []string
}

// Run replays the jobs of src and passes each outcome to sink. It holds
// only the jobs submitted and not yet finished, so a trace of any length
// replays in memory proportional to its queue. A source out of submit
// order is an error.
func Run(cfg Config, src Source, sink Sink) error {
	if len(cfg.Nodes) == 0 {
		return fmt.Errorf("no nodes to replay on")
	}
	queues := cfg.Queues
	// Without configured queues, an execution queue for every queue the
	// trace names ("workq" for jobs without one), in order of first
	// appearance: a queue is added when its first job is submitted.
	seen := map[string]bool{}
	addQueue := func(name string) {
		if cfg.Queues == nil && !seen[name] {
			seen[name] = true
			queues = append(queues, &core.Queue{Name: name, Execution: true, Enabled: true, Started: true, Limits: core.NoLimits, Priority: cfg.Priorities[name]})
		}
	}
	log := cfg.Log
	if log == nil {
		log = core.NopLogger{}
	}
	// Live state: queued and running jobs, and the running jobs' ends.
	jobs := make(map[*core.Job]*live, 1024)
	var queued []*core.Job
	// queuedCPUs[i] is queued[i]'s cpus in all: what anyFits looks at
	// first, without a map.
	var queuedCPUs []float64
	// ordered says queued is by Qtime and then Seq, as strict fifo tries
	// jobs (World.Ordered): true unless a trace's job numbers go back
	// within a second, until the queue empties.
	ordered := true
	// running is kept in Seq order, the order a world lists them in;
	// runCPUs[i] is running[i]'s cpus and start, for its cpu time at each
	// pass (without a look at the job but to set it).
	var running []*core.Job
	var runCPUs []runCPU
	ends := &endHeap{}
	// Elastic jobs: the running ones, the graceful shrinks under way (by
	// the time they free their nodes), and whether any job was resized
	// (only then may ends hold stale entries).
	var elastics []*live
	var due []shrinkDue
	resized := false
	nodes := make([]*core.Node, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		c := *n
		c.Assigned = core.Amounts{}
		nodes[i] = &c
	}
	byName := map[string]*core.Node{}
	// free is what the nodes that are up have free together, kept as jobs
	// start and end: a pass is skipped when no queued job fits in it.
	free := core.Amounts{}
	for _, n := range nodes {
		byName[n.Name] = n
		if n.Up() {
			for r, v := range n.Avail {
				free[r] += v
			}
		}
	}
	// next is the first job not yet submitted (nil when none is left),
	// pointing at nextJob, which each pull overwrites: what a pass keeps
	// of a job is copied from it first.
	var next *Job
	var nextJob Job
	lastSubmit := int64(0)
	pull := func() error {
		j, err := src.Next()
		if err == io.EOF {
			next = nil
			return nil
		}
		if err != nil {
			return err
		}
		if next != nil && j.Submit < lastSubmit {
			return fmt.Errorf("job %s submitted at %d after a job submitted at %d: the trace is not in submit order", j.ID, j.Submit, lastSubmit)
		}
		nextJob = j
		next, lastSubmit = &nextJob, j.Submit
		return nil
	}
	if err := pull(); err != nil {
		return err
	}
	final := func(l *live, end int64, node string) error {
		delete(jobs, l.core)
		return sink(Outcome{Job: &l.job, Seq: l.seq, Start: l.start, End: end, Node: node, Elastic: l.el != nil, Preempted: l.preempted})
	}
	// resize brings a running elastic job to its allocation (its Where)
	// as of t: the work done since its last change at the old rate is
	// taken off, its end and walltime rescaled (a new end pushed, the
	// old one left stale), its cpu time counted at the new rate from t.
	resize := func(l *live, t int64) {
		e := l.el
		done := (t - e.since) * e.cpus
		e.work, e.est = e.work-done, e.est-done
		e.since, e.cpus = t, max(int64(heldCPUs(l.core.Where)), 1)
		l.setEnd(t)
		ends.push(end{at: e.end, job: l.core})
		if i := runningAt(running, l.core); i >= 0 {
			runCPUs[i].resized(t, float64(e.cpus))
		}
	}
	// shrink gives back l's chunks on nodes at t.
	shrink := func(l *live, nodes []string, t int64) {
		j := l.core
		kept := make([]core.Chunk, 0, len(j.Where))
		var gone []core.Chunk
		for _, c := range j.Where {
			if slices.Contains(nodes, c.Node) {
				gone = append(gone, c)
			} else {
				kept = append(kept, c)
			}
		}
		release(byName, free, gone)
		j.Where = kept
		resize(l, t)
		if cfg.Events != nil {
			cfg.Events(Event{At: t, Job: l.job.ID, Kind: EventShrink, Procs: int(l.el.cpus), Nodes: nodeCount(kept)})
		}
	}
	done, seq := 0, 0
	// ended are the jobs that ended since the last pass.
	var ended []*core.Job
	// unfit counts the queued jobs, from the front, known not to fit in
	// what is free: until a job ends or a pass runs, what is free stays,
	// and only jobs submitted since need looking at.
	unfit := 0
	// The world of each pass is the same object, made again only when a
	// queue is added; its jobs are laid out in a kept buffer.
	var w *core.World
	worldQueues := -1
	// One pass at a time, each done with its plan before the next: the
	// passes share their calendar's and plan's memory.
	scratch := &core.Scratch{}
	var all []*core.Job
	var layout passJobs
	// stopped is the job the last pass's strict order stopped at (nil:
	// none, or the policy's order may change).
	var stopped *core.Job
	// Trace jobs mostly ask for one chunk of some cpus: its parsed form
	// is kept per shape.
	chunks := map[shape]selected{}
	numbers := map[requested]core.Amounts{}
	resvs := resvClock{all: cfg.Resvs}
	prev := int64(-1) // the last instant gone through
	var pre *preemption
	if cfg.Preempting {
		pre = newPreemption()
	}
	rs := &replayState{jobs: jobs, running: &running, runCPUs: &runCPUs, queued: &queued, queuedCPUs: &queuedCPUs,
		ordered: &ordered, ends: ends, byName: byName, free: free, resized: &resized}
	for next != nil || ends.Len() > 0 || len(queued) > 0 || len(due) > 0 || pre.waiting() {
		if resized {
			// An elastic job's ends before its last resize are stale.
			for ends.Len() > 0 && stale(jobs, (*ends)[0]) {
				ends.pop()
			}
		}
		// The next instant: the earliest end, graceful shrink or submit.
		t := int64(-1)
		if ends.Len() > 0 {
			t = (*ends)[0].at
		}
		if len(due) > 0 && (t < 0 || due[0].at < t) {
			t = due[0].at
		}
		if next != nil && (t < 0 || next.Submit < t) {
			t = next.Submit
		}
		if len(queued) > 0 {
			// A reservation's window that ends lets waiting jobs start.
			if e := resvs.nextEnd(prev, cfg.Origin); e >= 0 && (t < 0 || e < t) {
				t = e
			}
		}
		if t < 0 {
			// Jobs queued, nothing running, nothing to come: they never
			// start (asked for more than the machine has).
			break
		}
		prev = t
		// changed says jobs came or left at this instant: with preemption
		// a pass may then start a job without free room, or resume one.
		changed := false
		for ends.Len() > 0 && (*ends)[0].at == t {
			e := ends.pop()
			l := jobs[e.job]
			if resized && stale(jobs, e) {
				continue
			}
			var at int
			running, at = removeRunning(running, e.job)
			// Its final cpu time, for a policy that counts usage (fair
			// share): run time x its cpus, seen in the next pass's Ended.
			used := cpuTime(cpusOf(e.job), l.job.Run)
			if at >= 0 {
				if l.el != nil {
					used = runCPUs[at].at(t)
				}
				runCPUs = slices.Delete(runCPUs, at, at+1)
			}
			unfit, changed = 0, true
			release(byName, free, e.job.Where)
			if l.el != nil {
				elastics = slices.DeleteFunc(elastics, func(x *live) bool { return x == l })
			}
			e.job.State = core.JobFinished
			e.job.UsedCPU = used
			ended = append(ended, e.job)
			if cfg.Events != nil {
				cfg.Events(Event{At: t, Job: l.job.ID, Kind: EventEnd})
			}
			if err := final(l, t, e.job.Where[0].Node); err != nil {
				return err
			}
			done++
		}
		for len(due) > 0 && due[0].at == t {
			d := due[0]
			due = slices.Delete(due, 0, 1)
			if jobs[d.l.core] != d.l {
				continue // it ended first
			}
			d.l.el.shrinking = false
			shrink(d.l, d.nodes, t)
			unfit = 0
		}
		for next != nil && next.Submit == t {
			l := &live{job: *next, seq: seq, start: -1}
			seq++
			l.core = coreJob(&l.job, cfg.Origin, cfg.ByProcessor, chunks, numbers, &l.own)
			if l.job.MinProcs > 0 || l.core.Select.Elastic() >= 0 {
				l.el = &elastic{work: l.job.Run * int64(max(l.job.Procs, 1)), est: max(l.job.Walltime, 0) * int64(max(l.job.Procs, 1))}
			}
			addQueue(l.core.Queue)
			jobs[l.core] = l
			if len(queued) == 0 {
				ordered = true
			} else if last := queued[len(queued)-1]; cmp.Or(last.Qtime.Compare(l.core.Qtime), cmp.Compare(last.Seq, l.core.Seq)) > 0 {
				ordered = false
			}
			queued = append(queued, l.core)
			queuedCPUs = append(queuedCPUs, l.core.Totals["ncpus"])
			changed = true
			if err := pull(); err != nil {
				return err
			}
		}
		if cfg.Progress != nil && done%1000 == 0 {
			cfg.Progress(done, len(jobs))
		}
		for pass := 0; pass <= maxRepasses; pass++ {
			if stopped != nil && stopped.State == core.JobQueued && !cfg.Preempting && len(elastics) == 0 && len(cfg.Resvs) == 0 &&
				!free.Fits(stopped.Totals) {
				// The last pass's strict order stopped at a job that
				// still does not fit in what is free: jobs since came
				// after it, so a pass would start nothing
				// (Plan.StopAt).
				unfit = len(queued)
				break
			}
			if !(cfg.Preempting && changed) && !anyFits(free, queued[unfit:], queuedCPUs[unfit:]) && !resizable(elastics, free, len(queued) > 0) {
				// No queued job fits in what is free and no running job
				// could grow or give back: a pass would start nothing (it
				// would only restate comments), so skip it.
				unfit = len(queued)
				break
			}
			unfit = 0
			freedNow := false
			now := cfg.Origin.Add(time.Duration(t) * time.Second)
			for i, j := range running {
				j.UsedCPU = runCPUs[i].at(t)
			}
			all = layout.jobs(&queued, running, pre.unresumed())
			if w == nil || worldQueues != len(queues) {
				w = core.NewWorld(now, &core.Server{Name: "sim", Limits: core.NoLimits}, queues, nodes, nil)
				worldQueues = len(queues)
				// claim and release keep Assigned to what the running jobs
				// hold, and nothing reads comments.
				w.HeldByRunning, w.NoComments, w.Scratch = true, true, scratch
			}
			w.Now, w.Jobs, w.Ordered = now, all, ordered
			if len(cfg.Resvs) > 0 {
				w.SetResvs(resvs.at(now))
			}
			w.Ended, ended = ended, nil
			plan := cfg.Policy.Schedule(w, core.EventSim, log)
			stopped = plan.StoppedAt()
			// The pass is done with its Ended: the next gathers in its memory.
			clear(w.Ended)
			ended, w.Ended = w.Ended[:0], nil
			left := 0 // jobs that left the queue
			if pre != nil {
				pre.newPass()
			}
			for _, d := range plan.Decisions() {
				switch d.Kind {
				case core.DecidePreempt:
					pre.preempt(rs, d, t)
				case core.DecideResume:
					pre.resume(rs, d.Job, t)
				case core.DecideRun:
					j := d.Job
					if pre != nil && pre.blocked(j) {
						continue // its victims are still there
					}
					j.State, j.Stime, j.Where = core.JobRunning, now, d.Where
					l := jobs[j]
					l.start = t
					cpus := cpusOf(j)
					if l.el != nil {
						cpus = heldCPUs(j.Where)
						l.el.since, l.el.cpus = t, int64(cpus)
						elastics = append(elastics, l)
						l.setEnd(t)
					}
					var at int
					running, at = addRunning(running, j)
					runCPUs = slices.Insert(runCPUs, at, runCPU{cpus: cpus, start: float64(t)})
					left++
					claim(byName, free, j.Where)
					endAt := t + l.job.Run
					if l.el != nil {
						endAt = l.el.end
					}
					l.endAt = endAt
					ends.push(end{at: endAt, job: j})
					if cfg.Events != nil {
						cfg.Events(Event{At: t, Job: l.job.ID, Kind: EventStart, Procs: int(cpus), Nodes: nodeCount(j.Where)})
					}
				case core.DecideGrow:
					l := jobs[d.Job]
					j := d.Job
					if l == nil || l.el == nil || l.el.shrinking || j.State != core.JobRunning || len(d.Where) == 0 ||
						len(j.Where)+len(d.Where) > j.Select.MaxNodeCount() {
						continue // the server would refuse it
					}
					claim(byName, free, d.Where)
					j.Where = append(slices.Clip(j.Where), d.Where...)
					resize(l, t)
					resized = true
					if cfg.Events != nil {
						cfg.Events(Event{At: t, Job: l.job.ID, Kind: EventGrow, Procs: int(l.el.cpus), Nodes: nodeCount(j.Where)})
					}
				case core.DecideShrink:
					l := jobs[d.Job]
					nodes, ok := givesBack(l, d.Where)
					if !ok {
						continue // the server would refuse it
					}
					resized = true
					if grace := int64((d.Grace + time.Second - 1) / time.Second); !d.Immediate && grace > 0 {
						l.el.shrinking = true
						due = addDue(due, shrinkDue{at: t + grace, l: l, nodes: nodes})
						if cfg.Events != nil {
							cfg.Events(Event{At: t, Job: l.job.ID, Kind: EventShrinkAsked, Procs: int(l.el.cpus), Nodes: nodeCount(d.Job.Where), Until: t + grace})
						}
						continue
					}
					shrink(l, nodes, t)
					freedNow = true
				case core.DecideFail:
					// It leaves the queue and never runs.
					d.Job.State = core.JobFinished
					left++
					if err := final(jobs[d.Job], -1, ""); err != nil {
						return err
					}
					done++
				case core.DecideComment:
					d.Job.Comment = d.Text
				}
			}
			front := 0
			for front < left && front < len(queued) && queued[front].State != core.JobQueued {
				front++
			}
			if left > 0 && front == left {
				// Every job that left was at the front, as strict fifo starts
				// them: the rest stays as it is.
				clear(queued[:front])
				queued, queuedCPUs = queued[front:], queuedCPUs[front:]
				layout.trimmed(front)
			} else if left > 0 {
				kept, keptCPUs := queued[:0], queuedCPUs[:0]
				for i, j := range queued {
					if j.State == core.JobQueued {
						kept, keptCPUs = append(kept, j), append(keptCPUs, queuedCPUs[i])
					}
				}
				clear(queued[len(kept):])
				queued, queuedCPUs = kept, keptCPUs
			}
			if !freedNow {
				break
			}
		}
	}
	for _, j := range queued {
		if err := final(jobs[j], -1, ""); err != nil {
			return err
		}
	}
	for _, j := range pre.unresumed() {
		l := jobs[j]
		l.start = -1
		if err := final(l, -1, ""); err != nil {
			return err
		}
	}
	return nil
}

// Jobs is a Source over a slice, in submit order (a stable sort of the
// slice's order, which it leaves as it is).
// passJobs lays out a pass's jobs as its world lists them (the running
// ones, then the queued ones: World.Ordered) in one buffer whose second
// part is the replay's queue itself, with room before it: a pass copies
// in only the running jobs, never the queue, which on a deep trace holds
// many thousands of jobs that copying at every pass made the replay's
// cost grow with the queue's depth.
type passJobs struct {
	buf []*core.Job // the queue is buf[off:off+len(queue)]
	off int
	lo  int // where the last pass's jobs began
}

// jobs returns the pass's jobs: before, then *queue, in one slice. The
// queue is moved into the buffer when it is not there (it was grown
// elsewhere, or emptied) or there is not room enough before it; its
// slice is then made to point into the buffer, with room after it to
// grow in place.
func (l *passJobs) jobs(queue *[]*core.Job, before ...[]*core.Job) []*core.Job {
	need := 0
	for _, b := range before {
		need += len(b)
	}
	q := *queue
	there := len(q) > 0 && l.off < len(l.buf) && &l.buf[l.off] == &q[0]
	if !there || l.off < need {
		room := 2*need + 64
		nb := make([]*core.Job, room+len(q), room+2*len(q)+64)
		copy(nb[room:], q)
		clear(l.buf) // what the old buffer pointed at is not kept alive
		l.buf, l.off, l.lo = nb[:cap(nb)], room, room
		*queue = nb[room : room+len(q) : cap(nb)]
	}
	at := l.off - need
	if l.lo < at {
		clear(l.buf[l.lo:at]) // running jobs of the last pass not overwritten
	}
	l.lo = at
	for _, b := range before {
		at += copy(l.buf[at:], b)
	}
	return l.buf[l.off-need : l.off+len(q)]
}

// trimmed says the queue's first n jobs left it (queue = queue[n:]).
func (l *passJobs) trimmed(n int) { l.off += n }

func Jobs(jobs []Job) Source {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return jobs[order[a]].Submit < jobs[order[b]].Submit })
	return &sliceSource{jobs: jobs, order: order}
}

type sliceSource struct {
	jobs  []Job
	order []int
}

func (s *sliceSource) Next() (Job, error) {
	if len(s.order) == 0 {
		return Job{}, io.EOF
	}
	j := s.jobs[s.order[0]]
	s.order = s.order[1:]
	return j, nil
}

// Replay runs a workload held in memory and returns an outcome per job,
// in the slice's order, each pointing into jobs: for tests and small
// workloads (a trace replays through Run from a streaming Source).
func Replay(cfg Config, jobs []Job) ([]Outcome, error) {
	src := Jobs(jobs).(*sliceSource)
	order := slices.Clone(src.order) // source place -> index in jobs
	out := make([]Outcome, len(jobs))
	err := Run(cfg, src, func(o Outcome) error {
		i := order[o.Seq]
		o.Job = &jobs[i]
		out[i] = o
		return nil
	})
	return out, err
}

// anyFits reports whether some queued job's totals fit in what all nodes
// have free together (a necessary condition for any start). cpus[i] is
// queued[i]'s cpus: a job asking for more cpus than are free is passed
// over without a look at its other amounts.
func anyFits(free core.Amounts, queued []*core.Job, cpus []float64) bool {
	freeCPUs := free["ncpus"]
	for i, j := range queued {
		if cpus[i] > 0 && cpus[i] > freeCPUs {
			continue
		}
		if free.Fits(j.Totals) {
			return true
		}
	}
	return false
}

// selected is a parsed select and what its chunks take in all.
type selected struct {
	sel    resc.Select
	totals core.Amounts
}

func selectOf(sel resc.Select) selected {
	return selected{sel: sel, totals: sel.Amounts()}
}

// requested is what a trace job asks for, as its Resource_List numbers.
type requested struct {
	procs    int
	walltime int64
}

// maxNumbers bounds the Resource_List numbers a replay keeps to share:
// a replay's memory follows its queue, not its trace.
const maxNumbers = 4096

// numbersOf is j's Resource_List numbers (as coreJob makes them), the
// same map for every job asking for as much: nothing changes a job's
// numbers, and most jobs ask for what many others do.
// A nil seen shares nothing.
func numbersOf(seen map[requested]core.Amounts, j *Job) core.Amounts {
	k := requested{procs: max(j.Procs, 1), walltime: max(j.Walltime, 0)}
	if n, ok := seen[k]; ok {
		return n
	}
	n := core.Amounts{"ncpus": float64(k.procs)}
	if k.walltime > 0 {
		n["walltime"] = float64(k.walltime)
	}
	if seen != nil {
		if len(seen) >= maxNumbers {
			clear(seen)
		}
		seen[k] = n
	}
	return n
}

// shape is the request of a trace job without a select: one chunk of lo
// cpus, lo chunks of one cpu (each), or for an elastic job lo-hi chunks
// of one cpu (hi > 0).
type shape struct {
	lo, hi int
	each   bool
}

func (k shape) String() string {
	switch {
	case k.hi > 0:
		return strconv.Itoa(k.lo) + "-" + strconv.Itoa(k.hi) + ":ncpus=1"
	case k.each:
		return strconv.Itoa(k.lo) + ":ncpus=1"
	}
	return "1:ncpus=" + strconv.Itoa(k.lo)
}

// coreJob is the core's view of a trace job: its select, else its shape
// (parsed once per shape, in chunks), with its numbers (numbersOf, shared
// through numbers). An elastic job's walltime is its estimate at its
// minimum (see the package doc). It is made in into, or anew when into is
// nil.
func coreJob(j *Job, origin time.Time, byProc bool, chunks map[shape]selected, numbers map[requested]core.Amounts, into *core.Job) *core.Job {
	procs := max(j.Procs, 1)
	// Most trace jobs have no select: parse none (and make no error).
	var s selected
	ok := false
	if j.Select != "" {
		sel, err := resc.ParseSelect(j.Select)
		if ok = err == nil; ok {
			s = selectOf(sel)
		}
	}
	if !ok {
		k := shape{lo: procs, each: byProc}
		if j.MinProcs > 0 && j.MaxProcs >= j.MinProcs {
			k = shape{lo: j.MinProcs, hi: j.MaxProcs}
		}
		c, seen := chunks[k]
		if !seen {
			sel, _ := resc.ParseSelect(k.String())
			c = selectOf(sel)
			chunks[k] = c
		}
		s = c
	}
	queue := j.Queue
	if queue == "" {
		queue = "workq"
	}
	submit := origin.Add(time.Duration(j.Submit) * time.Second)
	seq, _ := strconv.ParseInt(j.ID, 10, 64)
	if into == nil {
		into = &core.Job{}
	}
	wall := j.Walltime
	if wall > 0 && (j.MinProcs > 0 || s.sel.Elastic() >= 0) {
		wall = ceilDiv(wall*int64(procs), max(int64(s.totals["ncpus"]), 1))
	}
	*into = core.Job{ID: j.ID, Seq: seq, Owner: j.User, Group: j.Group, Queue: queue, State: core.JobQueued, Rerunable: true,
		Qtime: submit, Etime: submit, Select: s.sel, Totals: s.totals,
		Walltime: time.Duration(wall) * time.Second, Numbers: numbersOf(numbers, j)}
	return into
}

// claim assigns chunks on their nodes; free, the up nodes' free total,
// goes down with them.
func claim(nodes map[string]*core.Node, free core.Amounts, where []core.Chunk) {
	for _, c := range where {
		n := nodes[c.Node]
		for r, v := range c.Amounts() {
			n.Assigned[r] += v
			if n.Up() {
				free[r] -= v
			}
		}
	}
}

func release(nodes map[string]*core.Node, free core.Amounts, where []core.Chunk) {
	for _, c := range where {
		n := nodes[c.Node]
		for r, v := range c.Amounts() {
			n.Assigned[r] -= v
			if n.Up() {
				free[r] += v
			}
		}
	}
}

// runCPU is a running job's cpus and start (seconds from the trace's
// start). An elastic job's start is moved at each resize so that
// cpus x (t - start) stays its cpu time (the cpu time so far over its new
// cpus before the resize): the pair stays as small as a rigid job needs.
type runCPU struct {
	cpus  float64
	start float64
}

// at is the job's cpu time at t.
func (r runCPU) at(t int64) time.Duration {
	return time.Duration((float64(t)-r.start)*r.cpus) * time.Second
}

// resized moves r to cpus at t, keeping its cpu time so far.
func (r *runCPU) resized(t int64, cpus float64) {
	used := (float64(t) - r.start) * r.cpus
	r.cpus, r.start = cpus, float64(t)-used/cpus
}

// setEnd sets an elastic job's end and walltime from its work and
// estimate left at its allocation, as of t.
func (l *live) setEnd(t int64) {
	e := l.el
	e.end = t + ceilDiv(e.work, e.cpus)
	if l.job.Walltime > 0 {
		left := max(ceilDiv(e.est, e.cpus), 1)
		l.core.Walltime = time.Duration(t-l.start+left) * time.Second
	}
}

// ceilDiv is a / b rounded up, for b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a > 0) == (b > 0) {
		q++
	}
	return q
}

// heldCPUs is the cpus the chunks take.
func heldCPUs(where []core.Chunk) float64 {
	n := 0.0
	for _, c := range where {
		n += c.Amounts()["ncpus"]
	}
	return n
}

// nodeCount is the number of distinct nodes of where.
func nodeCount(where []core.Chunk) int {
	n := 0
	for i, c := range where {
		if !slices.ContainsFunc(where[:i], func(p core.Chunk) bool { return p.Node == c.Node }) {
			n++
		}
	}
	return n
}

// stale says an end entry is not the job's end: it ended, it is an
// elastic job whose end moved, or a job preempted since.
func stale(jobs map[*core.Job]*live, e end) bool {
	l := jobs[e.job]
	return l == nil || l.el != nil && l.el.end != e.at || l.el == nil && l.endAt != e.at
}

// resizable says whether a pass could resize a running elastic job: one
// not being shrunk could grow into free cpus, or (when jobs are queued)
// give chunks above its minimum back.
func resizable(elastics []*live, free core.Amounts, queued bool) bool {
	freeCPUs := free["ncpus"]
	for _, l := range elastics {
		if l.el.shrinking {
			continue
		}
		j := l.core
		if freeCPUs > 0 && len(j.Where) < j.Select.MaxNodeCount() || queued && len(j.Where) > j.Select.NodeCount() {
			return true
		}
	}
	return false
}

// givesBack checks a shrink of l as the server does and returns the
// nodes it gives back: l is a running elastic job not being shrunk, the
// nodes are its own but its first, and it keeps its minimum.
func givesBack(l *live, where []core.Chunk) ([]string, bool) {
	if l == nil || l.el == nil || l.el.shrinking || l.core.State != core.JobRunning || len(where) == 0 {
		return nil, false
	}
	j := l.core
	var nodes []string
	for _, c := range where {
		if c.Node == j.Where[0].Node || !slices.ContainsFunc(j.Where, func(h core.Chunk) bool { return h.Node == c.Node }) {
			return nil, false
		}
		if !slices.Contains(nodes, c.Node) {
			nodes = append(nodes, c.Node)
		}
	}
	kept := 0
	for _, c := range j.Where {
		if !slices.Contains(nodes, c.Node) {
			kept++
		}
	}
	return nodes, kept >= j.Select.NodeCount()
}

// addDue inserts a graceful shrink in due, by the time it frees its
// nodes, after those due at the same time.
func addDue(due []shrinkDue, d shrinkDue) []shrinkDue {
	i := sort.Search(len(due), func(k int) bool { return due[k].at > d.at })
	return slices.Insert(due, i, d)
}

// runningAt is where j is in running (-1: not there).
func runningAt(running []*core.Job, j *core.Job) int {
	i := sort.Search(len(running), func(k int) bool { return running[k].Seq >= j.Seq })
	for ; i < len(running); i++ {
		if running[i] == j {
			return i
		}
	}
	return -1
}

type end struct {
	at  int64
	job *core.Job
}

// addRunning inserts j into running, kept by Seq and, for jobs of one
// Seq (a trace may repeat a job number), in start order: a world lists
// the running jobs in that order, and keeping it costs less than sorting
// them at every pass.
// It returns where j went.
func addRunning(running []*core.Job, j *core.Job) ([]*core.Job, int) {
	i := sort.Search(len(running), func(k int) bool { return running[k].Seq > j.Seq })
	return slices.Insert(running, i, j), i
}

// removeRunning removes j from running, and says where it was (-1: it
// was not there).
func removeRunning(running []*core.Job, j *core.Job) ([]*core.Job, int) {
	if i := runningAt(running, j); i >= 0 {
		return slices.Delete(running, i, i+1), i
	}
	return running, -1
}

// endHeap orders running jobs by end, then by Seq. Its push and pop are
// its own: container/heap's take and give an any, an allocation per job
// each way.
type endHeap []end

func (h endHeap) Len() int { return len(h) }
func (h endHeap) less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].job.Seq < h[b].job.Seq
}

func (h *endHeap) push(e end) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *endHeap) pop() end {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q[n] = end{}
	q = q[:n]
	// container/heap's down, step for step: jobs that end at one second
	// with one Seq leave in the order they always did.
	for i := 0; ; {
		j := 2*i + 1
		if j >= n {
			break
		}
		if r := j + 1; r < n && q.less(r, j) {
			j = r
		}
		if !q.less(j, i) {
			break
		}
		q[i], q[j] = q[j], q[i]
		i = j
	}
	*h = q
	return top
}

// cpuTime is the cpu time of a job that has run for secs seconds on
// cpus cpus, as a mom would report it for a job keeping them busy.
func cpuTime(cpus float64, secs int64) time.Duration {
	return time.Duration(float64(secs)*cpus) * time.Second
}

// cpusOf is how many cpus a job keeps busy: at least one.
func cpusOf(j *core.Job) float64 { return max(1, j.Totals["ncpus"]) }
