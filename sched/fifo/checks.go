package fifo

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fairshare"
	"github.com/gopbs/gopbs/sched/formula"
)

const notRunning = "Not Running: "

// serverLimits: the server's max_running, max_user_run, max_group_run.
type serverLimits struct{}

func (serverLimits) Name() string { return "server_limits" }

func (serverLimits) idle(cx *Context) bool {
	return cx.World.Server.Limits == core.NoLimits && !cx.World.Server.ResLimits.Set() && !cx.World.Server.Ent.Set()
}

func (serverLimits) Check(cx *Context, j *core.Job) core.Status {
	l := cx.World.Server.Limits
	if l != core.NoLimits {
		total, user, group := cx.Running("", j.Owner, j.Group)
		switch {
		case l.MaxRunning >= 0 && total >= l.MaxRunning:
			return core.NotNowf("server_limits", cServerLimit)
		case l.MaxUserRun >= 0 && user >= l.MaxUserRun:
			return core.EntityNotNow("server_limits", cServerUserLimit)
		case l.MaxGroupRun >= 0 && group >= l.MaxGroupRun:
			return core.EntityNotNow("server_limits", cServerGroupLimit)
		}
	}
	if kind, name, r := cx.resOver(cx.World.Server.ResLimits, j, ""); kind != "" {
		return core.EntityNotNow("server_limits", cResLimit+" in complex", kind, name, r)
	}
	if why, e := cx.entityBreach(cx.World.Server.Ent, j, ""); why != "" {
		return entityStatus("server_limits", why, e)
	}
	return core.OK
}

// queueLimits: the job's queue's max_running, max_user_run, max_group_run.
type queueLimits struct{}

func (queueLimits) Name() string { return "queue_limits" }

func (queueLimits) idle(cx *Context) bool {
	for _, q := range cx.World.Queues {
		if q.Limits != core.NoLimits || q.ResLimits.Set() || q.Ent.Set() {
			return false
		}
	}
	return true
}

func (queueLimits) Check(cx *Context, j *core.Job) core.Status {
	q := cx.World.Queue(j.Queue)
	if q == nil {
		return core.OK
	}
	if q.Limits != core.NoLimits {
		total, user, group := cx.Running(j.Queue, j.Owner, j.Group)
		switch {
		case q.Limits.MaxRunning >= 0 && total >= q.Limits.MaxRunning:
			return core.NotNowf("queue_limits", cQueueLimit)
		case q.Limits.MaxUserRun >= 0 && user >= q.Limits.MaxUserRun:
			return core.EntityNotNow("queue_limits", cQueueUserLimit)
		case q.Limits.MaxGroupRun >= 0 && group >= q.Limits.MaxGroupRun:
			return core.EntityNotNow("queue_limits", cQueueGroupLimit)
		}
	}
	if kind, name, r := cx.resOver(q.ResLimits, j, j.Queue); kind != "" {
		return core.EntityNotNow("queue_limits", cResLimit+" in queue %s", kind, name, r, j.Queue)
	}
	if why, e := cx.entityBreach(q.Ent, j, j.Queue); why != "" {
		return entityStatus("queue_limits", why, e)
	}
	return core.OK
}

// resOver names the first per-user or per-group limit of l (in queue,
// "" the server's) that j's user or group is over with j counted: a
// running job as it holds, a queued one as it would once started. kind
// is "user" or "group", "" when none is broken.
func (cx *Context) resOver(l core.ResLimits, j *core.Job, queue string) (kind, name, r string) {
	if !l.Set() {
		return "", "", ""
	}
	for _, lim := range []struct {
		kind, name string
		limits     core.Amounts
		held       func(r string) float64
	}{
		{"user", j.Owner, l.User, func(r string) float64 { u, _ := cx.Held(queue, j.Owner, j.Group, r); return u }},
		{"group", j.Group, l.Group, func(r string) float64 { _, g := cx.Held(queue, j.Owner, j.Group, r); return g }},
	} {
		for _, r := range slices.Sorted(maps.Keys(lim.limits)) {
			held := lim.held(r)
			if !j.Running() {
				want, _ := j.RequestNumber(r)
				held += want
			}
			if held > lim.limits[r] {
				return lim.kind, lim.name, r
			}
		}
	}
	return "", "", ""
}

// dedicatedBoundary: a job must not run into (or, in dedicated time, out
// of) a dedicated window, and a job without a walltime cannot be known not
// to.
type dedicatedBoundary struct{}

func (dedicatedBoundary) Name() string { return "dedicated_time" }

func (dedicatedBoundary) idle(cx *Context) bool { return cx.Inputs.Dedicated == nil }

func (dedicatedBoundary) Check(cx *Context, j *core.Job) core.Status {
	d := cx.Inputs.Dedicated
	if d == nil {
		return core.OK
	}
	wall := j.Walltime
	if j.ShrinkToFit() {
		// Its walltime is chosen to end by the window (stf.go): only its
		// min_walltime must.
		wall = j.MinWalltime
	}
	end := cx.World.Now.Add(wall)
	switch {
	case wall <= 0:
		return core.NotNowf("dedicated_time", cDedBoundary)
	case !cx.inDedicated && end.After(d.From):
		return core.Waitf("dedicated_time", d.To, cDedBoundary)
	case cx.inDedicated && end.After(d.To):
		return core.NotNowf("dedicated_time", cDedBoundary)
	}
	return core.OK
}

// starvation: while a job starves (help_starving_jobs), the others wait
// until it has started.
type starvation struct{}

func (starvation) Name() string { return "starving_jobs" }

// idle: the starving job, once started, is not starving any more.
func (starvation) idle(cx *Context) bool { return cx.starving == nil || cx.Settings.Backfill }

func (starvation) Check(cx *Context, j *core.Job) core.Status {
	if cx.starving != nil && j != cx.starving && !cx.Settings.Backfill {
		return core.NotNowf("starving_jobs", cStarving)
	}
	return core.OK
}

// sortKeys orders jobs by the sort keys of sched_config.
type sortKeys struct{}

func (sortKeys) Name() string { return "sort_by" }

func (sortKeys) Sort(cx *Context, jobs []*core.Job) {
	fairShare := cx.Settings.FairShare && cx.Inputs.Standing != nil
	if len(cx.Settings.Sort) == 0 && cx.Settings.Formula == nil && !fairShare {
		return // no order asked for: a stable sort would change nothing
	}
	less := comparator(cx.Settings.Sort, cx.Inputs.Standing)
	sort.SliceStable(jobs, func(a, b int) bool { return less(jobs[a], jobs[b]) })
	if f := cx.Settings.Formula; f != nil {
		byFormula(cx, f, jobs, fairShare)
		return
	}
	if fairShare {
		copy(jobs, cx.Inputs.Standing.Order(jobs, expectedUsage))
	}
}

// expectedUsage is the cpu seconds a job is expected to take, charged to
// its user when fair share picks it: its cput request, else walltime x
// ncpus, else one second (so that a pick still counts).
func expectedUsage(j *core.Job) float64 {
	if v, ok := j.RequestNumber("cput"); ok && v > 0 {
		return v
	}
	if j.Walltime > 0 {
		return j.Walltime.Seconds() * max(1, j.Totals["ncpus"])
	}
	return 1
}

// comparator builds a stable ordering from sort keys: keys in order until
// two jobs differ; a job without the value sorts after one with it. The
// fair_share key reads the users' percentages from standing (nil: no
// tree, the key orders nothing).
func comparator(keys []SortKey, standing *fairshare.Standing) func(a, b *core.Job) bool {
	return func(a, b *core.Job) bool {
		for _, k := range keys {
			var x, y float64
			var okx, oky bool
			switch {
			case k.FairShare:
				if standing == nil {
					continue
				}
				x, y, okx, oky = standing.Group(a.Owner).Percentage, standing.Group(b.Owner).Percentage, true, true
			case k.Priority:
				x, y, okx, oky = float64(a.Priority), float64(b.Priority), true, true
			case k.Resource != "":
				x, okx = a.RequestNumber(k.Resource)
				y, oky = b.RequestNumber(k.Resource)
			default:
				continue
			}
			switch {
			case okx && !oky:
				return true
			case !okx && oky:
				return false
			case !okx && !oky || x == y:
				continue
			}
			if k.Descending {
				return x > y
			}
			return x < y
		}
		return false
	}
}

// resources applies checks 10 and 11 of reference §2.4: for mem, ncpus
// and nodect, a resource the job requests and the queue or server lists
// must fit in resources_available minus what running jobs hold, or, with
// only resources_max set, under that per-job cap.
func resources(cx *Context, j *core.Job) string {
	if !cx.capped {
		return ""
	}
	q := cx.World.Queue(j.Queue)
	for _, scope := range []struct {
		queue        string
		avail, limit core.Amounts
	}{{j.Queue, q.ResourcesAvailable, q.ResourcesMax}, {"", cx.World.Server.ResourcesAvailable, cx.World.Server.ResourcesMax}} {
		for _, r := range []struct{ name, what string }{{"mem", "memory"}, {"ncpus", "cpus"}, {"nodect", "nodes"}} {
			want, ok := j.RequestNumber(r.name)
			if !ok {
				continue
			}
			var have float64
			if v, ok := scope.avail[r.name]; ok {
				have = v - cx.Assigned(scope.queue, r.name)
			} else if v, ok := scope.limit[r.name]; ok {
				have = v
			} else {
				continue
			}
			if have < want {
				return fmt.Sprintf("Not enough %s available", r.what)
			}
		}
	}
	return ""
}

func notEnough(r string, want, have float64) error {
	return fmt.Errorf("no node has %s=%g (largest: %g)", r, want, have)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// limitResources are the resources queue and server limits count.
var limitResources = []string{"mem", "ncpus", "nodect"}

// counts are the running jobs per server, queue, user and group, and the
// resources they hold, kept current as the cycle starts jobs.
type counts struct {
	all      counter
	queue    map[string]*counter
	server   core.Amounts
	perQueue map[string]core.Amounts
	resNames []string // limitedRes
}

type counter struct {
	total     int64
	byUser    map[string]int64
	byGroup   map[string]int64
	byProject map[string]int64
	// userRes, groupRes and projectRes are what each user's, group's
	// and project's running jobs hold of the resources limits name, and
	// allRes what all of them hold.
	userRes    map[string]core.Amounts
	groupRes   map[string]core.Amounts
	projectRes map[string]core.Amounts
	allRes     core.Amounts
}

func newCounter() *counter {
	return &counter{byUser: map[string]int64{}, byGroup: map[string]int64{}, byProject: map[string]int64{},
		userRes: map[string]core.Amounts{}, groupRes: map[string]core.Amounts{}, projectRes: map[string]core.Amounts{}, allRes: core.Amounts{}}
}

// limitedRes are the resources the world's per-user and per-group
// limits name, hard or soft.
func limitedRes(w *core.World) []string {
	set := map[string]bool{}
	add := func(ls ...core.ResLimits) {
		for _, l := range ls {
			for r := range l.User {
				set[r] = true
			}
			for r := range l.Group {
				set[r] = true
			}
		}
	}
	add(w.Server.ResLimits, w.Server.Soft.Res)
	for _, q := range w.Queues {
		add(q.ResLimits, q.Soft.Res)
	}
	ent := func(ls ...core.EntityLimits) {
		for _, l := range ls {
			for r := range l.RunRes {
				set[r] = true
			}
		}
	}
	ent(w.Server.Ent, w.Server.Soft.Ent)
	for _, q := range w.Queues {
		ent(q.Ent, q.Soft.Ent)
	}
	return slices.Sorted(maps.Keys(set))
}

func newCounts(w *core.World) *counts {
	c := &counts{all: *newCounter(), queue: map[string]*counter{}, server: core.Amounts{}, perQueue: map[string]core.Amounts{},
		resNames: limitedRes(w)}
	for _, j := range w.Jobs {
		if j.Running() {
			c.start(j)
		}
	}
	return c
}

func (c *counts) start(j *core.Job) { c.add(j, 1) }

// stop takes a job the cycle preempts out of the counts.
func (c *counts) stop(j *core.Job) { c.add(j, -1) }

// add counts j (sign 1) or takes it out (-1).
func (c *counts) add(j *core.Job, sign int64) {
	add := func(k *counter) {
		k.total += sign
		k.byUser[j.Owner] += sign
		k.byGroup[j.Group] += sign
		k.byProject[j.Project] += sign
		for _, r := range c.resNames {
			if v, ok := j.RequestNumber(r); ok {
				addAmount(k.userRes, j.Owner, r, float64(sign)*v)
				addAmount(k.groupRes, j.Group, r, float64(sign)*v)
				addAmount(k.projectRes, j.Project, r, float64(sign)*v)
				k.allRes[r] += float64(sign) * v
			}
		}
	}
	add(&c.all)
	q := c.queue[j.Queue]
	if q == nil {
		q = newCounter()
		c.queue[j.Queue] = q
	}
	add(q)
	qa := c.perQueue[j.Queue]
	if qa == nil {
		qa = core.Amounts{}
		c.perQueue[j.Queue] = qa
	}
	for _, r := range limitResources {
		if v, ok := j.RequestNumber(r); ok {
			c.server[r] += float64(sign) * v
			qa[r] += float64(sign) * v
		}
	}
}

func (c *counts) running(queue, user, group string) (int64, int64, int64) {
	k := &c.all
	if queue != "" {
		if k = c.queue[queue]; k == nil {
			return 0, 0, 0
		}
	}
	return k.total, k.byUser[user], k.byGroup[group]
}

// addAmount adds v of r to m[key].
func addAmount(m map[string]core.Amounts, key, r string, v float64) {
	a := m[key]
	if a == nil {
		a = core.Amounts{}
		m[key] = a
	}
	a[r] += v
}

// held is what user's and group's running jobs hold of r, on the server
// (queue "") or in a queue.
func (c *counts) held(queue, user, group, r string) (ofUser, ofGroup float64) {
	k := &c.all
	if queue != "" {
		if k = c.queue[queue]; k == nil {
			return 0, 0
		}
	}
	return k.userRes[user][r], k.groupRes[group][r]
}

func (c *counts) assigned(queue, r string) float64 {
	if queue == "" {
		return c.server[r]
	}
	return c.perQueue[queue][r]
}

// Settings are the options in effect for one cycle (sched_config for the
// current prime or non-prime period).
type Settings struct {
	ByQueue      bool
	StrictFIFO   bool
	RoundRobin   bool
	SortQueues   bool
	HelpStarving bool
	MaxStarve    time.Duration
	Sort         []SortKey
	// DedicatedPrefix marks queues that run only in dedicated time.
	DedicatedPrefix string
	IgnoreQueues    []string
	// Backfill turns EASY backfilling on: the first job that cannot start
	// gets a reservation at its earliest start, and later jobs (at most
	// BackfillDepth of them; 0 for all) start only where they cannot
	// delay it.
	Backfill      bool
	BackfillDepth int
	// FairShare orders jobs by how far their users are below their share
	// (Inputs.Standing), each user's jobs keeping the sort keys' order.
	FairShare bool
	// Formula is job_sort_formula (nil: none): jobs by its value, highest
	// first, before fair share and the sort keys, which order only jobs
	// of equal value.
	Formula *formula.Expr
	// LoadBalancing and LoadBalancingRR send one-chunk jobs to the
	// time-shared nodes by load (loadbalance.go).
	LoadBalancing   bool
	LoadBalancingRR bool
	// Activation filters of sched_config (run after a queue's own), how
	// long each may run, and how long exit 3 holds a job without a
	// hold_until; the activation hook reads them.
	ActivationFilters   []string
	FilterTimeout       time.Duration
	DefaultHoldDuration time.Duration
	// Elastic jobs (elastic.go): Balanced is scheduling_mode balanced
	// (else queued); PriorityBias is none, medium or high; a shrink is
	// ShrinkImmediate, or lets the job go within ShrinkGrace.
	Balanced        bool
	PriorityBias    string
	ShrinkImmediate bool
	ShrinkGrace     time.Duration
	// Preempt is preemption (preempt.go), nil when preemptive_sched is
	// off.
	Preempt *Preemption
}

// SortKey orders jobs by one value, ascending unless Descending.
type SortKey struct {
	// Resource names a Resource_List entry; "" with Priority false means
	// no ordering.
	Resource string
	Priority bool // the job's Priority attribute
	// FairShare orders by the percentage of the machine the job's user
	// has in the resource_group tree (sort_by: fair_share).
	FairShare  bool
	Descending bool
}

// Window is a dedicated-time window.
type Window struct{ From, To time.Time }

// Inputs are what a cycle depends on besides the world.
type Inputs struct {
	Settings Settings
	// Dedicated is the current or next dedicated-time window, nil when
	// none is pending.
	Dedicated *Window
	// Standing is the fair-share standing of the users (nil without a
	// resource_group tree or when fair share is not used).
	Standing *fairshare.Standing
	// LastRR is the time-shared node load_balancing_rr last started a job
	// on ("" at first): the next one starts after it.
	LastRR string
}
