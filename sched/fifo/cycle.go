package fifo

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gopbs/gopbs/sched/core"
)

// One cycle of the pipeline is a list of named stages, after the
// extension points of Kubernetes' scheduler framework. The cycle's
// stages run once each, in order (cycleStages); the jobs stage takes the
// jobs one at a time through the job stages (jobStages), each of which
// either passes the job on, decides it (the next job comes) or ends the
// cycle's jobs. Schedule is the short driver of both lists; the stages
// hold no state of their own: a cycle's state is the cycle value they
// share, made anew by each Schedule.

// cycleStage is one step of a whole cycle.
type cycleStage interface {
	Name() string
	run(c *cycle)
}

// jobStage is one step of a job's try.
type jobStage interface {
	Name() string
	try(c *cycle, a *attempt) verdict
}

// verdict is what a job stage says of the job it was given.
type verdict int

const (
	pass     verdict = iota // the next stage looks at the job
	decided                 // the job is dealt with this cycle: the next job
	endCycle                // no further job is tried this cycle
)

// cycleStages are a cycle's stages in the order they run.
var cycleStages = []cycleStage{
	dedicatedStage{},    // a dedicated-time window blocks the calendar
	reservationsStage{}, // reservations hold their nodes and run their jobs
	orderStage{},        // which queues may run, and the jobs in the order tried (QueueSort)
	preFilterStage{},    // the checks and ranking with something to say this cycle (PreFilter)
	growStage{},         // queued mode: running elastic jobs grow first
	jobsStage{},         // every candidate through jobStages
	shareStage{},        // balanced mode: elastic jobs share what is left
}

// jobStages are a job's stages in the order they run.
var jobStages = []jobStage{
	resumeStage{},  // a job suspended by preemption resumes or waits
	gateStage{},    // strict fifo, an activation's block, backfill_depth
	checkStage{},   // limits and the other checks (Filter), preemption for limits
	placeStage{},   // ranking and the calendar (Score): where it would run now
	startStage{},   // a job that fits: resources, activation (Permit), the start
	neverStage{},   // a job that can never run, or not even for its min_walltime
	preemptStage{}, // room made by preempting lower ranks (PostFilter)
	shrinkStage{},  // balanced mode: running elastic jobs give chunks back
	reserveStage{}, // the top job's reservation, or why it waits (Reserve)
}

// Schedule decides one cycle of w with the settings in force.
func (p *Pipeline) Schedule(w *core.World, in Inputs) *core.Plan {
	c := p.newCycle(w, in)
	for _, s := range cycleStages {
		s.run(c)
	}
	return c.plan
}

// cycle is one Schedule call's state, shared by its stages.
type cycle struct {
	p *Pipeline
	w *core.World
	// in and st are cx's (Context.Inputs and its Settings): a cycle
	// copies neither again.
	in   *Inputs
	st   *Settings
	now  time.Time
	cx   *Context
	plan *core.Plan

	// queueWhy is each queue's reason to run no job this cycle: "" none,
	// "-" no comment (route queues), else the comment.
	queueWhy map[string]string
	// lastQueue, why and known cache the last job's queue verdict: jobs
	// of one queue tend to come together.
	lastQueue, why string
	known          bool
	// lazy: the queue is gone through as w.Jobs lists it (orderStage);
	// pos is then the next of w.Jobs to look at, else order is the list.
	lazy  bool
	pos   int
	order []*core.Job

	checks  []Check
	ranking Ranking // nil: no opinion on any job this cycle
	// stamp is the comment of a start, made at the first.
	stamp string
	// capacity is what the nodes could ever give, worked out when a job
	// first does not fit.
	capacity     nodeCapacity
	capacityMade bool
	// Strict fifo without backfill stops a scope (a queue with by_queue,
	// else all jobs: scope "", which needs no map) at its first job that
	// cannot run.
	blocked    map[string]bool
	blockedAll bool
	// EASY: the first job that cannot start for want of nodes takes a
	// reservation (top); jobs after it, within the lookahead, start only
	// where they cannot delay it. OpenPBS's backfill_depth of the server
	// and queues lets more than one job take a reservation (tops counts
	// them), or none (backfill_depth 0: no backfilling).
	top    *core.Job
	tops   topCount
	looked int
	// blocker is the job an activation Block stopped the cycle at: no job
	// of equal or lower priority after it starts.
	blocker *core.Job
	// shrunk counts the chunks balanced mode took back for each job.
	shrunk map[*core.Job]int
	// attempt is the job being tried (jobsStage).
	attempt attempt
}

// attempt is one job's try through the job stages.
type attempt struct {
	j     *core.Job
	index int // its place in the cycle's order, 1 for the first
	// scope is what strict fifo stops at its first blocked job: its
	// queue with by_queue, else "" (all jobs).
	scope        string
	backfilling  bool
	ignoreBlocks bool // a dedicated queue's job inside the window
	// nodes are the ranking's (nil: any, in the calendar's order).
	nodes []*core.Node
	// jr is j as it would run: a shrink-to-fit job with the walltime
	// chosen for it (stf.go), which the calendar holds; where are its
	// chunks when fits.
	jr    *core.Job
	where []core.Chunk
	fits  bool
}

// newCycle is the state of a cycle of w: w.Scratch's, emptied, when the
// driver lends its memory (a cycle then allocates no state of its own).
func (p *Pipeline) newCycle(w *core.World, in Inputs) *cycle {
	// A driver that lends its memory (World.Scratch) gets its plan and
	// calendar back, emptied.
	plan := w.Scratch.Plan()
	if w.NoComments {
		plan.Quiet()
	}
	var c *cycle
	if s := w.Scratch; s != nil {
		c, _ = s.Policy.(*cycle)
		if c == nil {
			c = new(cycle)
			s.Policy = c
		}
	} else {
		c = new(cycle)
	}
	queueWhy, shrunk := c.queueWhy, c.shrunk
	if queueWhy == nil {
		queueWhy, shrunk = map[string]string{}, map[*core.Job]int{}
	}
	clear(queueWhy)
	clear(shrunk)
	cx := &Context{World: w, Cal: w.Scratch.Calendar(w), Settings: in.Settings, Inputs: in, lastRR: in.LastRR}
	*c = cycle{
		p: p, w: w, in: &cx.Inputs, st: &cx.Settings, now: w.Now, plan: plan, cx: cx,
		tops:     topCount{w: w, backfill: in.Settings.Backfill},
		queueWhy: queueWhy,
		shrunk:   shrunk,
	}
	return c
}

// isDed says whether q is a dedicated-time queue.
func (c *cycle) isDed(q string) bool {
	return c.st.DedicatedPrefix != "" && strings.HasPrefix(q, c.st.DedicatedPrefix)
}

// candidate says whether a queued job may be tried, commenting on those
// of queues that may not run now.
func (c *cycle) candidate(j *core.Job) bool {
	if !j.Queued() {
		return false
	}
	if j.Queue != c.lastQueue || c.lastQueue == "" {
		c.lastQueue = j.Queue
		c.why, c.known = c.queueWhy[j.Queue]
	}
	switch {
	case !c.known, c.why == "-":
		return false
	case c.why == "" && inResv(c.cx, j):
		return false // runReservations placed it
	case c.why != "":
		c.plan.Comment(j, notRunning+c.why)
		return false
	}
	return true
}

// next is the i-th job to try (from 0), or nil when there is none.
func (c *cycle) next(i int) *core.Job {
	if c.lazy {
		for ; c.pos < len(c.w.Jobs); c.pos++ {
			if j := c.w.Jobs[c.pos]; c.candidate(j) {
				c.pos++
				return j
			}
		}
		return nil
	}
	if i < len(c.order) {
		return c.order[i]
	}
	return nil
}

// neverRuns says why j could never run on the nodes as they are, or nil.
func (c *cycle) neverRuns(j *core.Job) error {
	if !c.capacityMade {
		c.capacityMade = true
		if allKnown(c.w) {
			c.capacity = capacityOf(c.w)
		}
	}
	if c.capacity.w == nil {
		return nil // a node not heard from yet might take it
	}
	return neverFits(c.w, j, &c.capacity)
}

func (c *cycle) stopped(scope string) bool {
	if scope == "" {
		return c.blockedAll
	}
	return c.blocked[scope]
}

// stop ends scope's starts at job at (strict fifo).
func (c *cycle) stop(scope string, at *core.Job) {
	if scope == "" {
		if !c.blockedAll && c.lazy {
			// The queue goes in queue-time order (lazy): until at can
			// start nothing after it will (Plan.StopAt).
			c.plan.StopAt(at)
		}
		c.blockedAll = true
		return
	}
	if c.blocked == nil {
		c.blocked = map[string]bool{}
	}
	c.blocked[scope] = true
}

// stopIfStrict stops j's scope under strict fifo when j takes no
// reservation.
func (c *cycle) stopIfStrict(a *attempt) {
	if c.st.StrictFIFO && c.tops.depth(a.j) == 0 {
		c.stop(a.scope, a.j)
	}
}

type dedicatedStage struct{}

func (dedicatedStage) Name() string { return "dedicated" }

func (dedicatedStage) run(c *cycle) {
	if d := c.in.Dedicated; d != nil {
		c.cx.inDedicated = c.now.After(d.From) && c.now.Before(d.To)
		// Ordinary jobs never run into the window (dedicated queues' jobs
		// ignore it: they run only inside).
		c.cx.Cal.Block(d.From, d.To)
	}
}

type reservationsStage struct{}

func (reservationsStage) Name() string { return "reservations" }

// Reservations keep their nodes before any job is placed
// (reservations.go); their own jobs run on what they hold.
func (reservationsStage) run(c *cycle) {
	c.p.holdReservations(c.cx, c.plan)
	c.p.runReservations(c.cx, c.plan)
}

type orderStage struct{}

func (orderStage) Name() string { return "order" }

func (orderStage) run(c *cycle) {
	st, w := c.st, c.w
	// Queues that may run jobs this cycle, in order.
	queues := w.Queues
	if st.SortQueues {
		queues = slices.Clone(queues)
		sort.SliceStable(queues, func(a, b int) bool { return queues[a].Priority > queues[b].Priority })
	}
	for _, q := range queues {
		switch {
		case !q.Execution:
			c.queueWhy[q.Name] = "-" // route queues: no comment
		case !q.Started:
			c.queueWhy[q.Name] = cQueueNotStarted
		case contains(st.IgnoreQueues, q.Name):
			c.queueWhy[q.Name] = cQueueIgnored
		case c.cx.inDedicated != c.isDed(q.Name):
			c.queueWhy[q.Name] = cDedConflict
		default:
			c.queueWhy[q.Name] = ""
		}
	}
	// The jobs in the order they are tried. Without sort keys, a formula
	// or fair share they are tried by queue time; under strict fifo a
	// world that already lists them so (World.Ordered), and wants no
	// comments, is gone through as it is, without a copy, so that a
	// cycle that stops early does not pay for the rest of a long queue.
	c.lazy = w.Ordered && w.NoComments && st.StrictFIFO && !(st.HelpStarving && st.MaxStarve > 0) && c.p.noOrder(c.in) && st.Preempt == nil && !hasReleased(w)
	if c.lazy {
		// The queued jobs come after the others (World.Ordered).
		c.pos = sort.Search(len(w.Jobs), func(k int) bool { return w.Jobs[k].Queued() })
		return
	}
	// perQueue is needed only by the orders that go queue by queue.
	byQueue := st.ByQueue || st.RoundRobin
	var perQueue map[string][]*core.Job
	if byQueue {
		perQueue = map[string][]*core.Job{}
	}
	all := make([]*core.Job, 0, len(w.Jobs))
	for _, j := range w.Jobs {
		if !c.candidate(j) {
			continue
		}
		if byQueue {
			perQueue[j.Queue] = append(perQueue[j.Queue], j)
		}
		all = append(all, j)
	}
	if byQueue {
		// Only these orders take the jobs queue by queue (arrange).
		for _, js := range perQueue {
			c.p.Order.Sort(c.cx, js)
		}
	}
	c.p.Order.Sort(c.cx, all)
	if st.HelpStarving && st.MaxStarve > 0 {
		worst := time.Duration(0)
		for _, j := range all {
			if over := c.now.Sub(j.Qtime) - st.MaxStarve; over > worst && !c.isDed(j.Queue) {
				worst, c.cx.starving = over, j
			}
		}
	}
	c.order = arrange(all, perQueue, queues, st)
	if c.cx.starving != nil {
		c.order = moveFirst(c.order, c.cx.starving)
	}
	c.order = c.cx.withReleased(c.order)
}

type preFilterStage struct{}

func (preFilterStage) Name() string { return "prefilter" }

func (preFilterStage) run(c *cycle) {
	c.checks = c.p.activeChecks(c.cx)
	// The ranking, unless it is the default one with load balancing off:
	// then it has no opinion on any job, and asking costs a status copied
	// back per job tried.
	c.ranking = c.p.Ranking
	if _, dflt := c.ranking.(LoadBalance); dflt && !c.st.LoadBalancing && !c.st.LoadBalancingRR {
		c.ranking = nil
	}
	// Whether the server or a queue caps resources (checks 10 and 11):
	// when none does, resources has nothing to say.
	w := c.w
	c.cx.capped = len(w.Server.ResourcesAvailable)+len(w.Server.ResourcesMax) > 0
	for _, q := range w.Queues {
		c.cx.capped = c.cx.capped || len(q.ResourcesAvailable)+len(q.ResourcesMax) > 0
	}
}

type growStage struct{}

func (growStage) Name() string { return "grow" }

// In queued mode running elastic jobs grow toward their maximum before
// anything starts (balanced mode shares at the end: shareStage).
func (growStage) run(c *cycle) {
	if !c.st.Balanced {
		c.p.grow(c.cx, c.plan, c.now)
	}
}

type jobsStage struct{}

func (jobsStage) Name() string { return "jobs" }

func (jobsStage) run(c *cycle) {
	// One attempt for the cycle, emptied per job: a cycle may try
	// hundreds of thousands of jobs (the simulator's).
	a := &c.attempt
	for i := 0; ; i++ {
		j := c.next(i)
		if j == nil {
			return
		}
		*a = attempt{j: j, index: i + 1, jr: j}
		for _, s := range jobStages {
			v := s.try(c, a)
			if v == endCycle {
				return
			}
			if v == decided {
				break
			}
		}
	}
}

type shareStage struct{}

func (shareStage) Name() string { return "share" }

func (shareStage) run(c *cycle) {
	if c.st.Balanced {
		c.p.share(c.cx, c.plan, c.now)
	}
}
