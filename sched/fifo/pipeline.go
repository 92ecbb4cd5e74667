package fifo

import (
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/sched/core"
)

// The FIFO policy as a pipeline of small extension points (the model of
// Kubernetes' scheduler framework and Nomad's feasibility checkers): an
// order of the jobs, checks that each return a core.Status, a ranking of
// the nodes, and an activation hook; the pipeline turns their verdicts
// into a core.Plan. Fair share plugs in as an order, load balancing as a
// ranking, activation filters as an activation hook.

// Order sorts the candidate jobs, most important first.
type Order interface {
	Name() string
	Sort(cx *Context, jobs []*core.Job)
}

// Check says whether a job may start now, before nodes are looked at.
type Check interface {
	Name() string
	Check(cx *Context, j *core.Job) core.Status
}

// Ranking orders the nodes a job may go to, best first: nil keeps the
// calendar's order and next fit; a status other than run means no node
// will do now (the job is not placed, reserved or backfilled this cycle).
type Ranking interface {
	Name() string
	Rank(cx *Context, j *core.Job) ([]*core.Node, core.Status)
}

// Activation has the last word on a start the pipeline found room for
// (activation filters, DESIGN §7). Its status decides: Run starts the
// job; Block starts neither it nor any job of equal or lower priority
// after it this cycle; Keep leaves its candidate resources reserved for
// it this cycle; WaitUntil holds it until Until, its resources released;
// Never fails it; NotNow only skips it. In a backfill window only Run
// starts a job, and Block and Keep are taken as NotNow: the gap belongs
// to the top job's reservation.
type Activation interface {
	Name() string
	Activate(cx *Context, c Candidate) core.Status
}

// Candidate is a start the pipeline found room for.
type Candidate struct {
	Job   *core.Job
	Where []core.Chunk
	// Backfill is set when the start would use a gap before a
	// reservation; Index is the job's place in this cycle's order (1 for
	// the first job tried).
	Backfill bool
	Index    int
	// Running is set when the job runs already and Where are the chunks
	// it would grow by (an elastic job): anything but Run leaves them to
	// others.
	Running bool
}

// Pipeline is one configuration of the extension points.
type Pipeline struct {
	Order       Order
	Checks      []Check
	Ranking     Ranking
	Activations []Activation
}

// Context is what the extension points read during one cycle: the world,
// its calendar, the settings, and the running counts as the cycle's
// decisions change them.
type Context struct {
	World    *core.World
	Cal      *core.Calendar
	Settings Settings
	Inputs   Inputs
	// counts are made on first use (most cycles set no limit that needs
	// them); uncounted lists the jobs the cycle started before then.
	counts    *counts
	uncounted []*core.Job
	// few holds uncounted while the cycle has started few jobs: most
	// cycles count none, and a simulator runs hundreds of thousands.
	few [4]*core.Job
	// inDedicated is set while a dedicated-time window is open.
	inDedicated bool
	// capped: the server or a queue has resources_available or
	// resources_max (resources).
	capped   bool
	starving *core.Job
	// load is each node's load as the cycle's starts raise it (load
	// balancing), and lastRR the time-shared node the last start went to.
	load   map[string]float64
	lastRR string
	// pre is the cycle's preemption (preempt.go), made on first use.
	pre *preemptState
}

// Running is the number of running jobs on the server (queue "") or in a
// queue: in all, of user and of group.
func (cx *Context) Running(queue, user, group string) (total, ofUser, ofGroup int64) {
	return cx.count().running(queue, user, group)
}

// stopCounted takes a job the cycle preempts out of the counts.
func (cx *Context) stopCounted(j *core.Job) {
	cx.countsChanged()
	cx.count().stop(j)
}

// recount counts again jobs taken out by stopCounted that were not
// preempted after all.
func (cx *Context) recount(jobs []*core.Job) {
	for _, j := range jobs {
		cx.startCounted(j)
	}
}

// countsChanged: a job's user or group may now be over a soft limit, or
// no longer: ranks are worked out again.
func (cx *Context) countsChanged() {
	if cx.pre != nil && len(cx.pre.ranks) > 0 && softLimited(cx.World) {
		clear(cx.pre.ranks)
	}
}

// Held is how much of resource r the running jobs of user and of group
// hold, on the server (queue "") or in a queue; only resources that
// per-user or per-group limits name are counted.
func (cx *Context) Held(queue, user, group, r string) (ofUser, ofGroup float64) {
	return cx.count().held(queue, user, group, r)
}

// Assigned is how much of resource r running jobs hold, on the server
// (queue "") or in a queue.
func (cx *Context) Assigned(queue, r string) float64 { return cx.count().assigned(queue, r) }

// count returns the running counts, made now if this is their first use.
func (cx *Context) count() *counts {
	if cx.counts == nil {
		cx.counts = newCounts(cx.World)
		for _, j := range cx.uncounted {
			cx.startCounted(j)
		}
		cx.uncounted = nil
	}
	return cx.counts
}

// startCounted counts a job the cycle starts.
func (cx *Context) startCounted(j *core.Job) {
	cx.countsChanged()
	if cx.counts == nil {
		if cx.uncounted == nil {
			cx.uncounted = cx.few[:0]
		}
		cx.uncounted = append(cx.uncounted, j)
		return
	}
	cx.counts.start(j)
}

// The comments of OpenPBS's scheduler, as users and tools know them.
const (
	cServerLimit      = "Server job limit has been reached."
	cServerUserLimit  = "User has reached server running job limit."
	cServerGroupLimit = "Group has reached server running limit."
	cQueueLimit       = "Queue job limit has been reached."
	cQueueUserLimit   = "User has reached queue running job limit."
	// cResLimit: a per-user or per-group resource limit (max_user_res,
	// max_group_res); the scope follows.
	cResLimit        = "Would exceed %s %s's limit on resource %s"
	cQueueGroupLimit = "Group has reached queue running limit."
	cDedBoundary     = "Job would cross dedicated time boundary"
	cStarving        = "Draining system to allow starving job to run"
	cNodes           = "Not enough of the right type of nodes are available"
	cShrinking       = "Waiting for running elastic jobs to give chunks back"
	cQueueNotStarted = "Queue not started."
	cDedConflict     = "Dedicated time conflict"
	cQueueIgnored    = "Queue is configured to be ignored"
	cStrictFIFO      = "Strict fifo order"
	cTopJob          = "Job would conflict with reservation or top job"
	// cMinWalltime follows cTopJob for a shrink-to-fit job that cannot
	// start even for its min_walltime (stf.go), which follows.
	cMinWalltime = " even with its min_walltime of "
	cNoWalltime  = "Job has no walltime: it cannot be backfilled"
	cBlocked     = "an activation filter blocked jobs of equal or lower priority at job "
	cStagingIn   = "Job's stage-in files are being copied to "
)

// DefaultPipeline is the classic FIFO policy: the sort keys of
// sched_config, and the checks of reference §2.4 step 5 in order.
func DefaultPipeline() *Pipeline {
	return &Pipeline{
		Order:   sortKeys{},
		Checks:  []Check{serverLimits{}, queueLimits{}, dedicatedBoundary{}, starvation{}},
		Ranking: LoadBalance{},
	}
}

// topCount counts the jobs that took a reservation against the depth
// that applies to each (OpenPBS's backfill_depth): a queue that sets one
// counts its own jobs, the others count together against the server's;
// with neither set, sched_config's backfill gives one, or none.
type topCount struct {
	w        *core.World
	backfill bool
	byQueue  map[string]int
	server   int
	// made says the fields below are worked out: queues, whether a
	// queue sets its own depth (when none does no job's queue is looked
	// up: a deep queue asks for each job that does not fit), and
	// serverDepth, the depth of the other queues' jobs.
	made        bool
	queues      bool
	serverDepth int
}

func (t *topCount) make() {
	t.made = true
	for _, q := range t.w.Queues {
		t.queues = t.queues || q.BackfillDepthSet
	}
	switch {
	case t.w.Server != nil && t.w.Server.BackfillDepthSet:
		t.serverDepth = t.w.Server.BackfillDepth
	case t.backfill:
		t.serverDepth = 1
	}
}

// ownDepth is the depth of j's queue when the queue sets one.
func (t *topCount) ownDepth(j *core.Job) (int, bool) {
	if !t.made {
		t.make()
	}
	if !t.queues {
		return 0, false
	}
	if q := t.w.Queue(j.Queue); q != nil && q.BackfillDepthSet {
		return q.BackfillDepth, true
	}
	return 0, false
}

// depth is how many jobs of j's count may take a reservation.
func (t *topCount) depth(j *core.Job) int {
	if d, ok := t.ownDepth(j); ok {
		return d
	}
	return t.serverDepth
}

// take reports whether j may take a reservation, and counts it.
func (t *topCount) take(j *core.Job) bool {
	if d, own := t.ownDepth(j); own {
		if t.byQueue[j.Queue] >= d {
			return false
		}
		if t.byQueue == nil {
			t.byQueue = map[string]int{}
		}
		t.byQueue[j.Queue]++
		return true
	}
	if t.server >= t.serverDepth {
		return false
	}
	t.server++
	return true
}

// noOrder reports whether the pipeline's order leaves jobs as they are:
// the sort keys' order with no key, formula or fair share.
func (p *Pipeline) noOrder(in *Inputs) bool {
	_, keys := p.Order.(sortKeys)
	st := in.Settings
	return keys && len(st.Sort) == 0 && st.Formula == nil && !(st.FairShare && in.Standing != nil)
}

// idler is a check that can tell at the start of a cycle that it will
// find nothing against any job of the cycle: it is then not asked.
type idler interface {
	idle(cx *Context) bool
}

// activeChecks are the checks that may say no this cycle, in order.
func (p *Pipeline) activeChecks(cx *Context) []Check {
	var out []Check
	for _, c := range p.Checks {
		if i, ok := c.(idler); ok && i.idle(cx) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// check runs the checks in order; the first that says no wins.
func (p *Pipeline) check(cx *Context, checks []Check, j *core.Job) core.Status {
	for _, c := range checks {
		if s := c.Check(cx, j); !s.IsRun() {
			if s.Plugin == "" {
				s.Plugin = c.Name()
			}
			return s
		}
	}
	return core.OK
}

// activate runs the activation hooks; the first that does not say Run
// decides.
func (p *Pipeline) activate(cx *Context, c Candidate) core.Status {
	for _, a := range p.Activations {
		if s := a.Activate(cx, c); !s.IsRun() {
			if s.Plugin == "" {
				s.Plugin = a.Name()
			}
			return s
		}
	}
	return core.OK
}

// arrange builds the order jobs are tried in: round robin across queues,
// queue by queue, or the sorted whole. strict_fifo changes no order (as
// OpenPBS's strict_ordering, of which strict_fifo is the old name): it
// only stops at the first job that cannot run.
func arrange(all []*core.Job, perQueue map[string][]*core.Job, queues []*core.Queue, st *Settings) []*core.Job {
	var order []*core.Job
	switch {
	case st.RoundRobin:
		for i := 0; ; i++ {
			added := false
			for _, q := range queues {
				if js := perQueue[q.Name]; i < len(js) {
					order = append(order, js[i])
					added = true
				}
			}
			if !added {
				break
			}
		}
	case st.ByQueue:
		for _, q := range queues {
			order = append(order, perQueue[q.Name]...)
		}
	default:
		order = all
	}
	return order
}

func moveFirst(js []*core.Job, j *core.Job) []*core.Job {
	out := make([]*core.Job, 0, len(js))
	out = append(out, j)
	for _, x := range js {
		if x != j {
			out = append(out, x)
		}
	}
	return out
}

func allKnown(w *core.World) bool {
	for _, n := range w.Nodes {
		if !n.Known() {
			return false
		}
	}
	return len(w.Nodes) > 0
}

// neverFits says why j cannot run even on empty nodes (every node known,
// whatever its state), or nil. When every chunk fits the largest node and
// there are nodes enough, the job is taken to fit without a search.
func neverFits(w *core.World, j *core.Job, capacity *nodeCapacity) error {
	oneChunk := len(j.Select) == 1 && j.Select[0].Count == 1 && j.Totals != nil
	if oneChunk {
		// One chunk: its amounts are the job's totals, already worked out
		// (most are cpus alone: a lookup costs less than a walk).
		if v, ok := j.Totals["ncpus"]; ok && len(j.Totals) == 1 {
			if v > capacity.cpus {
				return notEnough("ncpus", v, capacity.cpus)
			}
		} else {
			for r, v := range j.Totals {
				if v > capacity.of(r) {
					return notEnough(r, v, capacity.of(r))
				}
			}
		}
	}
	chunks, simple := 0, true
	for _, c := range j.Select {
		chunks += c.Count
		if !oneChunk {
			for r, v := range c.Amounts {
				if v > capacity.of(r) {
					return notEnough(r, v, capacity.of(r))
				}
			}
		}
		if len(c.Props) > 0 {
			simple = false // a property or host to match: search
		}
	}
	if simple && chunks <= capacity.known {
		return nil
	}
	var cands []*place.Node
	for _, n := range w.Nodes {
		if n.Known() {
			// With nothing running, every node is free of other jobs.
			cands = append(cands, &place.Node{Name: n.Name, Avail: n.Props, Free: n.Avail, Idle: true, HostIdle: true})
		}
	}
	_, err := place.Chunks(j.Select, j.Place, cands, nil)
	return err
}

// nodeCapacity is what the known nodes have with nothing running: the
// largest amount of each resource on one node, and how many nodes.
type nodeCapacity struct {
	w     *core.World // nil when some node is not known yet
	known int
	cpus  float64 // the largest ncpus
	// largest is the largest amount of each resource, made when a job
	// first asks for more than cpus (of).
	largest core.Amounts
}

func capacityOf(w *core.World) nodeCapacity {
	c := nodeCapacity{w: w}
	for _, n := range w.Nodes {
		if n.Known() {
			c.known++
			c.cpus = max(c.cpus, n.Avail["ncpus"])
		}
	}
	return c
}

// of is the largest amount of r on one known node.
func (c *nodeCapacity) of(r string) float64 {
	if r == "ncpus" {
		return c.cpus
	}
	if c.largest == nil {
		c.largest = core.Amounts{}
		for _, n := range c.w.Nodes {
			if n.Known() {
				for r, v := range n.Avail {
					c.largest[r] = max(c.largest[r], v)
				}
			}
		}
	}
	return c.largest[r]
}

// cCanNeverRun heads the comment of a job no node could ever hold, as
// OpenPBS's scheduler writes it; the job stays queued.
const cCanNeverRun = "Can Never Run: "

// failNever says so when no node could ever hold j (it stays queued).
func failNever(plan *core.Plan, j *core.Job, neverRuns func(*core.Job) error) bool {
	err := neverRuns(j)
	if err != nil {
		plan.CanNeverRun(j, cCanNeverRun+err.Error())
	}
	return err != nil
}

// waitOrNever comments why j is not tried in this backfill window, unless
// it could never run at all: then it says so, as it would have had it
// been tried.
func waitOrNever(plan *core.Plan, j *core.Job, neverRuns func(*core.Job) error, why string) {
	if !failNever(plan, j, neverRuns) {
		plan.Comment(j, notRunning+why)
	}
}
