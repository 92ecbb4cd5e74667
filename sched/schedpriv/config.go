package schedpriv

import (
	"slices"
	"time"

	"github.com/gopbs/gopbs/sched/formula"
)

// Settings are the options that may differ between prime and non-prime
// time. The scheduler picks one set each cycle (Config.Active).
type Settings struct {
	RoundRobin       bool    // round_robin: one job from each queue in turn
	ByQueue          bool    // by_queue: take queues one after another
	StrictFIFO       bool    // strict_fifo, or OpenPBS strict_ordering
	FairShare        bool    // fair_share
	LoadBalancing    bool    // load_balancing over time-shared nodes
	LoadBalancingRR  bool    // load_balancing_rr
	HelpStarvingJobs bool    // help_starving_jobs
	SortQueues       bool    // sort_queues by queue priority
	SortBy           SortKey // sort_by; DefaultSortBy when absent
	// Keys is the multi_sort key list (key lines), used when SortBy is
	// MultiSort, compared in order.
	Keys []SortKey

	// Backfill (backfill; on unless the file turns it off): when the
	// first job in order cannot start, later jobs may start now if they
	// cannot delay its reserved start (Config.BackfillDepth says how many
	// are looked at).
	Backfill bool

	// OpenPBS options with a prime/non-prime suffix.
	BackfillPrime   bool           // backfill_prime: jobs may not cross a prime boundary
	PrimeSpill      time.Duration  // prime_spill: how far they may cross it
	PreemptiveSched bool           // preemptive_sched
	JobSortKeys     []ResourceSort // job_sort_key lines, in order
	NodeSortKeys    []ResourceSort // node_sort_key lines, in order
	SMPClusterDist  string         // smp_cluster_dist: pack, round_robin or lowest_load

	// Elastic jobs (a select with a chunk count range, "2-8:ncpus=4"),
	// Windows HPC's modes. SchedulingMode (scheduling_mode): ModeQueued
	// starts jobs in order, each with as many chunks as are free up to
	// its maximum, and grows running jobs toward their maximum before
	// anything else starts; ModeBalanced starts every job at its minimum
	// and shares what is left. PriorityBias (priority_bias: none, medium,
	// high) weighs the shares by priority in balanced mode. Shrink
	// (shrink: graceful, immediate) is how chunks are taken back from a
	// running job, ShrinkGrace (shrink_grace) how long a graceful shrink
	// lets the job give them back before its tasks there are killed.
	SchedulingMode string
	PriorityBias   string
	Shrink         string
	ShrinkGrace    time.Duration
}

// Elastic scheduling modes (Settings.SchedulingMode).
const (
	ModeQueued   = "queued"
	ModeBalanced = "balanced"
)

// What fair share charges (Config.FairshareUsageRes): UsageCput the cpu
// time a job's processes used on all its nodes; UsageHeld the cpus it held
// times how long it held them, allocation by allocation (an elastic job
// that grows is charged more from the growth on, whether it uses the cpus
// or not).
const (
	UsageCput = "cput"
	UsageHeld = "ncpus*walltime"
)

// DefaultShrinkGrace is shrink_grace when the file does not set it.
const DefaultShrinkGrace = 60 * time.Second

// clone returns a deep copy, so that a caller of Active cannot change the
// configuration through the slices.
func (s Settings) clone() Settings {
	s.Keys = slices.Clone(s.Keys)
	s.JobSortKeys = slices.Clone(s.JobSortKeys)
	s.NodeSortKeys = slices.Clone(s.NodeSortKeys)
	return s
}

// Config is a parsed sched_config. The zero value is not meaningful; start
// from NewConfig (what an empty file gives) or ParseConfig.
type Config struct {
	Prime    Settings // in force during prime time
	NonPrime Settings // in force during non-prime time

	LogFilter       int           // log_filter: event classes (bit mask) not logged
	DedicatedPrefix string        // dedicated_prefix: names of dedicated-time queues start with it ("" none)
	IgnoreQueues    []string      // ignore_queue lines (at most MaxIgnoreQueues)
	MaxStarve       time.Duration // max_starve: queued this long means starving
	HalfLife        time.Duration // half_life of fair-share usage
	UnknownShares   int           // unknown_shares: shares of the "unknown" group
	SyncTime        time.Duration // sync_time: how often usage is written to disk

	// BackfillDepth (backfill_depth) is how many jobs after the first
	// blocked one are considered for backfilling: a positive number, or
	// BackfillDepthAll for the whole queue. DefaultBackfillDepth when
	// absent. Backfilling itself is switched per side by Settings.Backfill.
	BackfillDepth int

	// OpenPBS options without a prime suffix.
	PrimetimePrefix          string        // primetime_prefix: queues that run only in prime time
	NonprimetimePrefix       string        // nonprimetime_prefix: queues that run only in non-prime time
	PrimeExemptAnytimeQueues bool          // prime_exempt_anytime_queues
	Resources                []string      // resources the scheduler checks (empty: the policy's own list)
	FairshareUsageRes        string        // fairshare_usage_res: UsageCput (default) or UsageHeld
	FairshareEntity          string        // fairshare_entity: euser, egroup, Account_Name, queue or egroup:euser
	FairshareDecayTime       time.Duration // fairshare_decay_time
	FairshareDecayFactor     float64       // fairshare_decay_factor, 0 < f < 1 (0.5)
	FairshareEnforceNoShares bool          // fairshare_enforce_no_shares

	// JobSortFormula (job_sort_formula) orders queued jobs by a formula
	// of their terms, highest value first, ahead of fair share and the
	// sort keys (which then only break ties); nil when not set. OpenPBS
	// keeps it in a server attribute; it lives here so that pbs_sched -t
	// and pbs_simulate see it with the rest of the policy.
	JobSortFormula *formula.Expr

	// Activation filters (DESIGN §7): the programs pbs_sched runs, in
	// order, before starting a job it found resources for
	// (activation_filter lines, after the job's queue's own
	// activation_filters); how long each may run (filter_timeout,
	// DefaultFilterTimeout when absent); and how long exit code 3 holds a
	// job without a hold_until of its own (default_hold_duration,
	// MinHoldDuration..MaxHoldDuration, DefaultHoldDuration when absent).
	ActivationFilters   []string
	FilterTimeout       time.Duration
	DefaultHoldDuration time.Duration

	// Preemption (preempt.go), on where Settings.PreemptiveSched is:
	// preempt_queue_prio (a queue of at least this priority is an
	// express queue), preempt_prio (the levels, highest first),
	// preempt_order (how jobs are preempted, by walltime left) and
	// preempt_sort (which of one rank goes first).
	PreemptQueuePrio int
	PreemptPrio      PreemptPrio
	PreemptOrder     PreemptOrder
	PreemptSort      string

	// Warnings are findings that did not stop the file from being used:
	// OpenPBS options accepted but not implemented, keys without multi_sort
	// and the like. Callers log them.
	Warnings []Problem
}

// Limits from the classic scheduler that remain part of the file format.
const (
	// MaxDedicatedPrefix is the longest dedicated_prefix: a queue name
	// (PBS_MAXQUEUENAME) is at most 15 characters.
	MaxDedicatedPrefix = 15
	// MaxIgnoreQueues is how many ignore_queue lines Torque accepts.
	MaxIgnoreQueues = 16
)

// Backfill lookahead (Config.BackfillDepth).
const (
	// DefaultBackfillDepth is backfill_depth when the file does not set it.
	DefaultBackfillDepth = 1000
	// BackfillDepthAll is "backfill_depth: all": every job in the queue
	// after the first blocked one is considered.
	BackfillDepthAll = -1
)

// Activation filter settings' defaults and bounds.
const (
	DefaultFilterTimeout = 15 * time.Second
	DefaultHoldDuration  = 900 * time.Second
	MinHoldDuration      = 60 * time.Second
	MaxHoldDuration      = 604800 * time.Second
)

// The admin guide's defaults (OpenPBS 2.3 Administrator Guide §3.5.1.1,
// "the associated values as shipped as defaults are shown in braces"): an
// option missing from sched_config takes these, so that a site copying the
// guide's example, which leaves some out, gets the policy the guide
// describes. The classic scheduler zeroed them instead, which made
// fair_share without a half_life line hang.
const (
	DefaultByQueue         = true
	DefaultSortBy          = ShortestJobFirst
	DefaultLogFilter       = 256 // PBSEVENT_DEBUG2 not logged
	DefaultDedicatedPrefix = "ded"
	DefaultHalfLife        = 24 * time.Hour
	DefaultUnknownShares   = 10
	DefaultSyncTime        = time.Hour
)

// NewConfig returns the settings of an empty sched_config: the admin
// guide's defaults where it gives one (jobs by queue, shortest job first,
// debug2 messages not logged, dedicated queues named ded..., fair-share
// usage halving every 24 hours, saved hourly, 10 shares for unknown
// users), every other switch off but backfill, max_starve 0, plus the
// documented OpenPBS defaults for its options (fair-share usage from cput
// per euser, jobs packed) and backfilling on in prime and non-prime time,
// looking at DefaultBackfillDepth jobs.
func NewConfig() *Config {
	s := Settings{ByQueue: DefaultByQueue, SortBy: DefaultSortBy, Backfill: true, SMPClusterDist: "pack",
		SchedulingMode: ModeQueued, PriorityBias: "none", Shrink: "graceful", ShrinkGrace: DefaultShrinkGrace}
	return &Config{
		Prime:                s,
		NonPrime:             s.clone(),
		LogFilter:            DefaultLogFilter,
		DedicatedPrefix:      DefaultDedicatedPrefix,
		HalfLife:             DefaultHalfLife,
		UnknownShares:        DefaultUnknownShares,
		SyncTime:             DefaultSyncTime,
		BackfillDepth:        DefaultBackfillDepth,
		FairshareUsageRes:    "cput",
		FairshareEntity:      "euser",
		FairshareDecayFactor: 0.5,
		FilterTimeout:        DefaultFilterTimeout,
		DefaultHoldDuration:  DefaultHoldDuration,
		PreemptQueuePrio:     DefaultPreemptQueuePrio,
		PreemptPrio:          slices.Clone(DefaultPreemptPrio),
		PreemptOrder:         slices.Clone(DefaultPreemptOrder),
		PreemptSort:          PreemptSortMinTimeSinceStart,
	}
}

// Active returns the settings in force in prime time (prime true) or
// non-prime time, as a copy the caller may keep.
func (c *Config) Active(prime bool) Settings {
	if prime {
		return c.Prime.clone()
	}
	return c.NonPrime.clone()
}

// FairShareAny reports whether fair share is on in prime or non-prime time,
// which is when the usage file must be read and kept.
func (c *Config) FairShareAny() bool { return c.Prime.FairShare || c.NonPrime.FairShare }

// Decay returns how often fair-share usage decays and by what factor. The
// classic half_life wins when set (factor 0.5), as it is by default;
// otherwise OpenPBS's fairshare_decay_time and fairshare_decay_factor
// apply (a file that sets fairshare_decay_time and no half_life gets
// HalfLife 0 from ParseConfig, so that its own setting is the one used). An
// interval of 0 means no decay is configured, which ParseConfig rejects when
// fair share is on.
func (c *Config) Decay() (interval time.Duration, factor float64) {
	if c.HalfLife > 0 {
		return c.HalfLife, 0.5
	}
	return c.FairshareDecayTime, c.FairshareDecayFactor
}

// IsDedicatedQueue reports whether a queue is a dedicated-time queue.
func (c *Config) IsDedicatedQueue(queue string) bool {
	return c.DedicatedPrefix != "" && len(queue) >= len(c.DedicatedPrefix) &&
		queue[:len(c.DedicatedPrefix)] == c.DedicatedPrefix
}

// IsIgnoredQueue reports whether a queue is named by an ignore_queue line.
func (c *Config) IsIgnoredQueue(queue string) bool { return slices.Contains(c.IgnoreQueues, queue) }
