package core

import (
	"time"

	"github.com/gopbs/gopbs/internal/entlim"
	"github.com/gopbs/gopbs/resc"
)

// Amounts are consumable resources by name: ncpus and ngpus as counts,
// mem and vmem in bytes, walltime-like resources in seconds.
type Amounts = resc.Amounts

// JobState is a job's state letter as qstat shows it.
type JobState byte

// Job states.
const (
	JobQueued    JobState = 'Q'
	JobHeld      JobState = 'H'
	JobWaiting   JobState = 'W'
	JobRunning   JobState = 'R'
	JobExiting   JobState = 'E'
	JobSuspended JobState = 'S'
	JobTransit   JobState = 'T'
	JobFinished  JobState = 'F'
	// JobBegun is a job array's parent once a subjob has started.
	JobBegun JobState = 'B'
)

// Chunk is one chunk of a job placed on one node.
type Chunk struct {
	Node  string
	Chunk resc.Chunk // Count 1
}

// Amounts is what the chunk takes from its node (its consumables; one cpu
// when it names none).
func (c Chunk) Amounts() Amounts { return c.Chunk.Amounts }

// Job is a job as policies see it: every value parsed.
type Job struct {
	ID       string
	Seq      int64
	Name     string
	Owner    string // the user the job runs as
	Group    string
	Project  string
	Account  string
	Queue    string
	State    JobState
	Priority int64
	// Holds are the hold types set ("u", "o", "s" letters); HoldUntil is
	// when a hold lifts by itself (zero: never).
	Holds     string
	HoldUntil time.Time
	Qtime     time.Time // entered its queue
	Etime     time.Time // became eligible
	Stime     time.Time // started (running jobs)
	// Select and Place are the job's request; Totals sums its consumable
	// amounts over the chunks (a chunk naming no ncpus takes one).
	Select resc.Select
	Place  resc.Place
	Totals Amounts
	// Walltime is the requested walltime; 0 when none was asked for.
	Walltime time.Duration
	// MinWalltime and MaxWalltime are a shrink-to-fit job's bounds (0:
	// none; MaxWalltime 0 with MinWalltime set: no upper bound): while it
	// has no Walltime, its start chooses one between them (ShrinkToFit).
	MinWalltime time.Duration
	MaxWalltime time.Duration
	// Numbers holds every numeric Resource_List value (bytes, seconds,
	// counts), for sort keys, limits and formulas on any resource.
	Numbers Amounts
	// Used is resources_used: cput and walltime as durations, mem bytes.
	UsedCPU  time.Duration
	UsedWall time.Duration
	UsedMem  int64
	// Where runs the job (running jobs), chunk by chunk.
	Where   []Chunk
	Comment string
	// StageIn says whether the job has stage-in files and how far their
	// early stage-in got; StageNode is the node it copies them to.
	StageIn   StageState
	StageNode string
	// Attrs holds every plain attribute as the server sent it, for the
	// attributes a policy asked for beyond those typed here.
	Attrs map[string]string
	// Preemption. Released marks a job suspended by preemption: it holds
	// nothing (the server took its resources back) until the scheduler
	// resumes it on the chunks of Where. Ending marks a running job
	// already on its way off its nodes (a requeue or checkpoint asked
	// for): what it holds comes free without preempting anyone.
	// Rerunable and NoCheckpoint say whether a preemption may requeue it
	// (a rerunnable batch job) and whether it may checkpoint it (its
	// Checkpoint attribute is not n).
	Released     bool
	Ending       bool
	Rerunable    bool
	NoCheckpoint bool
	// FromArray is the id of the array a subjob was made from, for
	// subjobs that wait in their array's queued indices with nothing of
	// their own: the live runner makes them from the array's parent, which
	// is not a job of the world itself ("" for every other job): what is decided about it alone (a start, a
	// hold) names the subjob, what it shares with its array (a comment,
	// an estimate) is said on the array.
	FromArray string
	// Accrue is the job's accrue_type as the server keeps it (OpenPBS's
	// numbers, AccrueEligible...; 0 while the server's
	// eligible_time_enable is off), and Eligible its eligible_time as of
	// EligibleAsOf (when the status was fetched; zero: as of the world's
	// Now).
	Accrue       uint8
	Eligible     time.Duration
	EligibleAsOf time.Time
}

// OpenPBS's accrue types a scheduler reads and tells (the server keeps
// the others).
const (
	AccrueIneligible uint8 = 1
	AccrueEligible   uint8 = 2
)

// EligibleAt is the job's eligible time at now: what the server said,
// with the time since if it was accruing eligible time then.
func (j *Job) EligibleAt(now time.Time) time.Duration {
	e := j.Eligible
	if j.Accrue == AccrueEligible && !j.EligibleAsOf.IsZero() && now.After(j.EligibleAsOf) {
		e += now.Sub(j.EligibleAsOf)
	}
	return e
}

// StageState is how far a queued job's stage-in files are.
type StageState uint8

// Stage states.
const (
	NoStageIn     StageState = iota // the job stages nothing in
	StageInNeeded                   // it has stage-in files, not copied yet
	StagingIn                       // an early stage-in is copying them to StageNode
	StagedIn                        // they are in place on StageNode
)

// ShrinkToFit reports whether j is a shrink-to-fit job whose walltime is
// still to be chosen: it has a min_walltime and no walltime.
func (j *Job) ShrinkToFit() bool { return j.MinWalltime > 0 && j.Walltime <= 0 }

// Queued reports whether the job waits to run.
func (j *Job) Queued() bool { return j.State == JobQueued }

// Running reports whether the job holds resources: it runs, exits, or
// was suspended by an operator (a job suspended by preemption holds
// nothing: Released).
func (j *Job) Running() bool {
	return (j.State == JobRunning || j.State == JobExiting || j.State == JobSuspended) && !j.Released
}

// At is an elastic job as it would be holding n chunks of its range:
// Select fixed at n, Totals and the chunk sums among Numbers (ncpus, mem,
// nodect, ...) as that allocation takes them; what the policy counts
// against limits. A job without a range, or n outside it, is j itself.
func (j *Job) At(n int) *Job {
	if j.Select.Elastic() < 0 {
		return j
	}
	sel, ok := j.Select.WithNodeCount(n)
	if !ok {
		return j
	}
	out := *j
	out.Select = sel
	out.Totals = Amounts(sel.Amounts())
	out.Numbers = make(Amounts, len(j.Numbers))
	for k, v := range j.Numbers {
		out.Numbers[k] = v
	}
	for k, v := range sel.Sums() {
		out.Numbers[k] = v
	}
	out.Numbers["nodect"] = float64(n)
	return &out
}

// Holding is the number of chunks an elastic job counts as: what it holds
// when running, its minimum when not.
func (j *Job) Holding() int {
	if j.Running() && len(j.Where) > 0 {
		return len(j.Where)
	}
	return j.Select.NodeCount()
}

// RequestNumber is a Resource_List value as a number (bytes, seconds or
// the count), and whether the job asked for it.
func (j *Job) RequestNumber(name string) (float64, bool) {
	v, ok := j.Numbers[name]
	return v, ok
}

// NodeState is a set of node state flags.
type NodeState uint16

// Node state flags; a node with none of them is free.
const (
	NodeOffline NodeState = 1 << iota
	NodeDown
	NodeUnknown // its mom has not reported since the server started
	NodeJobBusy // every cpu assigned
	NodeBusy    // load above max_load
)

// Node is an execution node.
type Node struct {
	Name  string
	Host  string
	Arch  string
	State NodeState
	// Avail is resources_available: consumables as amounts; Props holds
	// every resources_available value as text, to match chunk properties
	// (arch, host, a site's string or boolean resources).
	Avail    Amounts
	Props    map[string]string
	Assigned Amounts // resources_assigned
	Loadave  float64
	// IdealLoad and MaxLoad are the mom's $ideal_load / $max_load, -1 when
	// not set; TimeShared marks a time-shared node (load balancing).
	IdealLoad  float64
	MaxLoad    float64
	TimeShared bool
}

// Known reports whether the node's mom has reported: before that, what it
// has is not known.
func (n *Node) Known() bool { return n.State&NodeUnknown == 0 }

// Up reports whether the node may take jobs now.
func (n *Node) Up() bool { return n.State&(NodeOffline|NodeDown|NodeUnknown|NodeBusy) == 0 }

// Limits are running-job limits; -1 means none.
type Limits struct {
	MaxRunning  int64
	MaxUserRun  int64
	MaxGroupRun int64
}

// SoftLimits are running-job soft limits (max_user_run_soft,
// max_group_run_soft, 0 meaning none; max_user_res_soft,
// max_group_res_soft). A job may run over them; it then ranks at
// queue_softlimits or server_softlimits for preemption.
type SoftLimits struct {
	MaxUserRun  int64
	MaxGroupRun int64
	Res         ResLimits
	// Ent are max_run_soft and max_run_res_soft.
	Ent EntityLimits
}

// Set reports whether any soft limit is set.
func (l SoftLimits) Set() bool {
	return l.MaxUserRun > 0 || l.MaxGroupRun > 0 || l.Res.Set() || l.Ent.Set()
}

// EntityLimits are OpenPBS's entity limits on running jobs (max_run, and
// max_run_res.RES on what they hold, or their soft forms): per user,
// group and project, named or generic, and overall (internal/entlim).
type EntityLimits struct {
	Run    entlim.Limits
	RunRes map[string]entlim.Limits
}

// Set reports whether any entity limit is set.
func (l EntityLimits) Set() bool { return len(l.Run) > 0 || len(l.RunRes) > 0 }

// ResLimits are per-user and per-group limits on the resources running
// jobs hold (max_user_res, max_group_res, or their soft forms): a
// resource not in User or Group has none.
type ResLimits struct {
	User, Group Amounts
}

// Set reports whether any limit is set.
func (l ResLimits) Set() bool { return len(l.User)+len(l.Group) > 0 }

// NoLimits has every limit off.
var NoLimits = Limits{MaxRunning: -1, MaxUserRun: -1, MaxGroupRun: -1}

// Queue is a queue.
type Queue struct {
	Name      string
	Execution bool // else a route queue
	Enabled   bool
	Started   bool
	Priority  int64
	Limits    Limits
	ResLimits ResLimits
	Soft      SoftLimits
	Ent       EntityLimits // max_run, max_run_res
	// ResourcesAvailable and ResourcesMax hold the queue's amounts (mem,
	// ncpus, nodect); MaxWalltime is resources_max.walltime (0: none).
	ResourcesAvailable Amounts
	ResourcesMax       Amounts
	MaxWalltime        time.Duration
	// BackfillDepth is the queue's backfill_depth when BackfillDepthSet:
	// how many of its jobs get a reserved start when they cannot start
	// now (unset: the server's applies).
	BackfillDepth    int
	BackfillDepthSet bool
	// ActivationFilters are the queue's own activation filter programs,
	// run before the scheduler's (DESIGN §7).
	ActivationFilters []string
}

// Server is the server object.
type Server struct {
	Name               string
	Limits             Limits
	ResLimits          ResLimits
	Soft               SoftLimits
	Ent                EntityLimits // max_run, max_run_res
	DefaultQueue       string
	ResourcesAvailable Amounts
	ResourcesMax       Amounts
	MaxWalltime        time.Duration
	// BackfillDepth is the server's backfill_depth when BackfillDepthSet:
	// how many jobs of queues that set none get a reserved start (unset:
	// sched_config's backfill decides, one or none).
	BackfillDepth    int
	BackfillDepthSet bool
	// EligibleTimeEnable is the server's eligible_time_enable: jobs
	// accrue eligible time (Job.Accrue, Job.Eligible), and a job held
	// back by its user's, group's or project's run limit is to be told
	// (Plan.Accrue).
	EligibleTimeEnable bool
}

// World is everything one cycle decides on. Jobs are every unfinished job
// in submission order; Nodes and Queues in the server's order.
type World struct {
	Now    time.Time
	Server *Server
	Queues []*Queue
	Nodes  []*Node
	Jobs   []*Job
	// Ended are jobs that finished since the last cycle and that the
	// policy asked to see once more (their final resources_used), for
	// fair-share usage; no check or placement reads them.
	Ended []*Job
	// HeldByRunning promises that every node's Assigned is exactly what
	// the chunks of the world's running jobs hold, as a simulator keeps
	// it: a calendar then need not add up the running jobs to know what
	// is free now (NewCalendar). A live server's counts may lag, so it
	// leaves this false.
	HeldByRunning bool
	// NoComments says the world's maker keeps no job comments (a
	// simulator reports starts and ends only): a policy may leave them
	// out, and stop going through the jobs once only comments can follow.
	NoComments bool
	// Ordered promises that Jobs lists the jobs that are not queued
	// first, then the queued ones by Qtime and then Seq, as strict fifo
	// tries them (a simulator keeps them so): a cycle may then stop going
	// through them early.
	Ordered bool
	// Scratch, when set, lends the cycle the memory of the cycle before
	// (Scratch.Calendar, Scratch.Plan): the world's maker runs one cycle
	// at a time and is done with a cycle's plan and calendar before the
	// next starts, as a simulator is. pbs_sched leaves it nil.
	Scratch *Scratch
	// Resvs are the reservations (SetResvs): confirmed ones keep their
	// nodes on the calendar, and the jobs of an open one's queue run
	// only on its nodes.
	Resvs []*Resv

	queueByName map[string]*Queue
	nodeByName  map[string]*Node
	resvByQueue map[string]*Resv
}

// NewWorld indexes its parts. The caller gives up the slices.
func NewWorld(now time.Time, server *Server, queues []*Queue, nodes []*Node, jobs []*Job) *World {
	w := &World{Now: now, Server: server, Queues: queues, Nodes: nodes, Jobs: jobs,
		queueByName: make(map[string]*Queue, len(queues)), nodeByName: make(map[string]*Node, len(nodes))}
	if w.Server == nil {
		w.Server = &Server{Limits: NoLimits}
	}
	for _, q := range queues {
		w.queueByName[q.Name] = q
	}
	for _, n := range nodes {
		w.nodeByName[n.Name] = n
	}
	return w
}

// Queue returns a queue by name (nil when unknown).
func (w *World) Queue(name string) *Queue { return w.queueByName[name] }

// Node returns a node by name (nil when unknown).
func (w *World) Node(name string) *Node { return w.nodeByName[name] }

// MaxWalltime is the longest a job of queue may run: its queue's
// resources_max.walltime, else the server's; 0 when neither is set.
func (w *World) MaxWalltime(queue string) time.Duration {
	if q := w.Queue(queue); q != nil && q.MaxWalltime > 0 {
		return q.MaxWalltime
	}
	return w.Server.MaxWalltime
}
