package sim

import (
	"math"
	"slices"
	"sort"
)

// Tau is the bounded slowdown's floor on the run time, in seconds.
const Tau = 10

// Metrics summarise a replay, as published studies report them.
type Metrics struct {
	Jobs        int     `json:"jobs"`
	NotStarted  int     `json:"not_started"`
	AvgWait     float64 `json:"avg_wait_s"`
	MedianWait  float64 `json:"median_wait_s"`
	P95Wait     float64 `json:"p95_wait_s"`
	MaxWait     float64 `json:"max_wait_s"`
	AvgBSLD     float64 `json:"avg_bsld"`
	Utilization float64 `json:"utilization"`
	Makespan    int64   `json:"makespan_s"`
	// Fairness is Jain's index over the users' average bounded slowdowns
	// (1 when every user fares alike).
	Fairness float64 `json:"jain_fairness"`
	// Preempted counts the jobs preempted at least once.
	Preempted int     `json:"preempted,omitempty"`
	Users     []Group `json:"users"`
	Queues    []Group `json:"queues"`
}

// Group is one user's or queue's share.
type Group struct {
	Name    string  `json:"name"`
	Jobs    int     `json:"jobs"`
	AvgWait float64 `json:"avg_wait_s"`
	AvgBSLD float64 `json:"avg_bsld"`
}

// BSLD is the bounded slowdown of one started job: its response time
// over its run time as given (at least Tau), at least 1. An elastic or
// preempted job's response time is end - submit, its run time as its
// allocations made it (or its suspensions) included; another job's is its
// wait + its run time.
func BSLD(o Outcome) float64 {
	wait := float64(o.Start - o.Job.Submit)
	run := float64(o.Job.Run)
	resp := wait + run
	if o.Elastic || o.Preempted {
		resp = float64(o.End - o.Job.Submit)
	}
	return math.Max(1, resp/math.Max(run, Tau))
}

// Measure computes the metrics of outcomes held in memory on a machine of
// procs processors (a replay adds each to a Stats as it comes instead).
func Measure(outs []Outcome, procs int) Metrics {
	s := NewStats(procs)
	for _, o := range outs {
		s.Add(o)
	}
	return s.Metrics()
}

// Stats accumulates the metrics and plots of a replay from its outcomes,
// in any order, one at a time: a replay holds no list of outcomes. What
// it keeps grows with the trace only by the exact median and 95th
// percentile, which need every wait: 4 bytes a started job (8 for a wait
// of 136 years or more). The rest is per user and per queue, or of fixed
// size (the plots' series and histogram).
type Stats struct {
	procs       int
	jobs        int
	notStarted  int
	preempted   int
	first, last int64 // earliest submit of any job, latest end (-1: none)
	wait, bsld  exactSum
	area        exactSum // processor-seconds used
	waits       []uint32 // of started jobs, sorted by Metrics
	bigWaits    []int64  // waits from 2^32 s up, likewise
	sorted      bool
	users       map[string]*acc
	queues      map[string]*acc
	busy        stepSeries // processors in use
	queued      stepSeries // jobs submitted and not started
	waitCounts  [len(waitBuckets)]float64
}

// NewStats starts the metrics of a replay on procs processors.
func NewStats(procs int) *Stats {
	return &Stats{procs: procs, first: math.MaxInt64, last: -1, users: map[string]*acc{}, queues: map[string]*acc{}}
}

// Add counts one job's outcome.
func (s *Stats) Add(o Outcome) {
	j := o.Job
	s.first = min(s.first, j.Submit)
	s.queued.add(j.Submit, 1)
	if o.Start < 0 {
		s.notStarted++
		return
	}
	s.jobs++
	if o.Preempted {
		s.preempted++
	}
	s.last = max(s.last, o.End)
	wait := o.Start - j.Submit
	if wait < 1<<32 {
		s.waits = append(s.waits, uint32(wait))
	} else {
		s.bigWaits = append(s.bigWaits, wait)
	}
	s.sorted = false
	b := BSLD(o)
	s.wait.add(float64(wait))
	s.bsld.add(b)
	procs := max(j.Procs, 1)
	s.area.add(float64(j.Run) * float64(procs))
	for _, g := range [2]struct {
		m    map[string]*acc
		name string
	}{{s.users, j.User}, {s.queues, j.Queue}} {
		a := g.m[g.name]
		if a == nil {
			a = &acc{}
			g.m[g.name] = a
		}
		a.n++
		a.wait.add(float64(wait))
		a.bsld.add(b)
	}
	busy := float64(procs)
	if (o.Elastic || o.Preempted) && o.End > o.Start {
		// Its work over its run: the average of the processors it held.
		busy = float64(j.Run) * float64(procs) / float64(o.End-o.Start)
	}
	s.busy.add(o.Start, busy)
	s.busy.add(o.End, -busy)
	s.queued.add(o.Start, -1)
	s.waitCounts[waitBucket(wait)]++
}

// nthWait is the n-th smallest wait of the started jobs.
func (s *Stats) nthWait(n int) float64 {
	if !s.sorted {
		slices.Sort(s.waits)
		slices.Sort(s.bigWaits)
		s.sorted = true
	}
	if n < len(s.waits) {
		return float64(s.waits[n])
	}
	return float64(s.bigWaits[n-len(s.waits)])
}

// Metrics are the replay's metrics so far.
func (s *Stats) Metrics() Metrics {
	m := Metrics{Jobs: s.jobs, NotStarted: s.notStarted, Preempted: s.preempted}
	if m.Jobs == 0 {
		return m
	}
	n := float64(m.Jobs)
	m.AvgWait = s.wait.value() / n
	m.AvgBSLD = s.bsld.value() / n
	m.MedianWait = s.nthWait(m.Jobs / 2)
	m.P95Wait = s.nthWait(min(m.Jobs-1, m.Jobs*95/100))
	m.MaxWait = s.nthWait(m.Jobs - 1)
	m.Makespan = s.last - s.first
	if m.Makespan > 0 && s.procs > 0 {
		m.Utilization = s.area.value() / (float64(s.procs) * float64(m.Makespan))
	}
	m.Users = groups(s.users)
	m.Queues = groups(s.queues)
	var sum, sq float64
	for _, u := range m.Users {
		sum += u.AvgBSLD
		sq += u.AvgBSLD * u.AvgBSLD
	}
	if sq > 0 {
		m.Fairness = sum * sum / (float64(len(m.Users)) * sq)
	}
	return m
}

// acc is one user's or queue's share so far.
type acc struct {
	n          int
	wait, bsld exactSum
}

func groups(m map[string]*acc) []Group {
	out := make([]Group, 0, len(m))
	for name, a := range m {
		n := float64(a.n)
		out = append(out, Group{Name: name, Jobs: a.n, AvgWait: a.wait.value() / n, AvgBSLD: a.bsld.value() / n})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}
