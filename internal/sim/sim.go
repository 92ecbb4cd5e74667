// Package sim replays a workload through a scheduling policy under a
// virtual clock: the same core (package sched/core), the same policy and
// the same sched_priv files as pbs_sched, with jobs that end at start +
// their run time. It is pure: the caller reads the trace and the files
// and writes the results (pbs_simulate).
//
// Time follows the reference semantics of ../shared/traces/README.md:
// it advances from event to event; at one instant, first every job that
// ends then releases its processors, then every job submitted then joins
// the queue (in trace order), then one scheduling pass runs.
package sim

import (
	"container/heap"
	"fmt"
	"sort"
	"strconv"
	"time"

	"gopbs/internal/place"
	"gopbs/internal/resc"
	"gopbs/sched/core"
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
	// one chunk of Procs cpus.
	Select string
}

// Outcome is what happened to one job.
type Outcome struct {
	Job   *Job
	Start int64 // -1 when it never started (failed, or still queued at the end)
	End   int64
	Node  string
}

// Config is a replay: the machine, the policy (configured by its caller)
// and the virtual time at which the trace starts.
type Config struct {
	Nodes  []*core.Node
	Queues []*core.Queue // nil: one execution queue "workq"
	Policy core.Policy
	Log    core.Logger // nil: none
	Origin time.Time   // the trace's time 0 (its UnixStartTime)
	// Progress, when set, is called now and then with the jobs done.
	Progress func(done, total int)
}

// Run replays jobs (in trace order) and returns an outcome per job, in
// the same order.
func Run(cfg Config, jobs []Job) ([]Outcome, error) {
	if len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("no nodes to replay on")
	}
	queues := cfg.Queues
	if queues == nil {
		// An execution queue for every queue the trace names ("workq" for
		// jobs without one), in order of first appearance.
		seen := map[string]bool{}
		for i := range jobs {
			name := jobs[i].Queue
			if name == "" {
				name = "workq"
			}
			if !seen[name] {
				seen[name] = true
				queues = append(queues, &core.Queue{Name: name, Execution: true, Enabled: true, Started: true, Limits: core.NoLimits})
			}
		}
	}
	log := cfg.Log
	if log == nil {
		log = core.NopLogger{}
	}
	out := make([]Outcome, len(jobs))
	order := make([]int, len(jobs))
	for i := range jobs {
		order[i] = i
		out[i] = Outcome{Job: &jobs[i], Start: -1, End: -1}
	}
	sort.SliceStable(order, func(a, b int) bool { return jobs[order[a]].Submit < jobs[order[b]].Submit })

	// Live state: queued and running core jobs, and the running jobs' ends.
	cj := make(map[*core.Job]int, 1024) // core job -> index in jobs
	var queued []*core.Job
	running := map[*core.Job]bool{}
	ends := &endHeap{}
	nodes := make([]*core.Node, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		c := *n
		c.Assigned = core.Amounts{}
		nodes[i] = &c
	}
	byName := map[string]*core.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	next, done := 0, 0
	for next < len(order) || ends.Len() > 0 || len(queued) > 0 {
		// The next instant: the earliest end or submit.
		t := int64(-1)
		if ends.Len() > 0 {
			t = (*ends)[0].at
		}
		if next < len(order) && (t < 0 || jobs[order[next]].Submit < t) {
			t = jobs[order[next]].Submit
		}
		if t < 0 {
			// Jobs queued, nothing running, nothing to come: they never
			// start (asked for more than the machine has).
			break
		}
		for ends.Len() > 0 && (*ends)[0].at == t {
			e := heap.Pop(ends).(end)
			delete(running, e.job)
			delete(cj, e.job)
			release(byName, e.job)
			done++
		}
		for next < len(order) && jobs[order[next]].Submit == t {
			i := order[next]
			j := coreJob(&jobs[i], cfg.Origin)
			cj[j] = i
			queued = append(queued, j)
			next++
		}
		if !anyFits(nodes, queued) {
			// No queued job fits in what is free: a pass would start
			// nothing (it would only restate comments), so skip it.
			continue
		}
		now := cfg.Origin.Add(time.Duration(t) * time.Second)
		all := make([]*core.Job, 0, len(running)+len(queued))
		for j := range running {
			all = append(all, j)
		}
		sort.Slice(all, func(a, b int) bool { return all[a].Seq < all[b].Seq })
		all = append(all, queued...)
		w := core.NewWorld(now, &core.Server{Name: "sim", Limits: core.NoLimits}, queues, nodes, all)
		plan := cfg.Policy.Schedule(w, core.EventSim, log)
		started := map[*core.Job]bool{}
		for _, d := range plan.Decisions() {
			switch d.Kind {
			case core.DecideRun:
				j := d.Job
				i := cj[j]
				j.State, j.Stime, j.Where = core.JobRunning, now, d.Where
				running[j] = true
				started[j] = true
				claim(byName, j)
				out[i].Start, out[i].End = t, t+jobs[i].Run
				out[i].Node = d.Where[0].Node
				heap.Push(ends, end{at: t + jobs[i].Run, job: j})
			case core.DecideFail:
				started[d.Job] = true // leaves the queue, never runs
				delete(cj, d.Job)
				done++
			case core.DecideComment:
				d.Job.Comment = d.Text
			}
		}
		if len(started) > 0 {
			kept := queued[:0]
			for _, j := range queued {
				if !started[j] {
					kept = append(kept, j)
				}
			}
			queued = kept
		}
		if cfg.Progress != nil && done%1000 == 0 {
			cfg.Progress(done, len(jobs))
		}
	}
	return out, nil
}

// anyFits reports whether some queued job's totals fit in what all nodes
// have free together (a necessary condition for any start).
func anyFits(nodes []*core.Node, queued []*core.Job) bool {
	free := core.Amounts{}
	for _, n := range nodes {
		if !n.Up() {
			continue
		}
		for r, v := range n.Avail {
			free[r] += v - n.Assigned[r]
		}
	}
	for _, j := range queued {
		if free.Fits(j.Totals) {
			return true
		}
	}
	return false
}

// coreJob is the core's view of a trace job: one chunk of Procs cpus.
func coreJob(j *Job, origin time.Time) *core.Job {
	procs := max(j.Procs, 1)
	sel, err := resc.ParseSelect(j.Select)
	if j.Select == "" || err != nil {
		sel, _ = resc.ParseSelect("1:ncpus=" + strconv.Itoa(procs))
	}
	queue := j.Queue
	if queue == "" {
		queue = "workq"
	}
	submit := origin.Add(time.Duration(j.Submit) * time.Second)
	seq, _ := strconv.ParseInt(j.ID, 10, 64)
	req := map[string]string{"ncpus": strconv.Itoa(procs), "select": sel.String()}
	if j.Walltime > 0 {
		req["walltime"] = resc.FormatDuration(j.Walltime)
	}
	totals := core.Amounts{}
	for _, c := range sel {
		for r, v := range place.Amounts(c) {
			totals[r] += v * float64(c.Count)
		}
	}
	return &core.Job{ID: j.ID, Seq: seq, Owner: j.User, Group: j.Group, Queue: queue, State: core.JobQueued,
		Qtime: submit, Etime: submit, Select: sel, Totals: totals,
		Walltime: time.Duration(j.Walltime) * time.Second, Request: req, Numbers: core.RequestNumbers(req)}
}

func claim(nodes map[string]*core.Node, j *core.Job) {
	for _, c := range j.Where {
		n := nodes[c.Node]
		for r, v := range c.Amounts() {
			n.Assigned[r] += v
		}
	}
}

func release(nodes map[string]*core.Node, j *core.Job) {
	for _, c := range j.Where {
		n := nodes[c.Node]
		for r, v := range c.Amounts() {
			n.Assigned[r] -= v
		}
	}
}

type end struct {
	at  int64
	job *core.Job
}

// endHeap orders running jobs by end, then by start order.
type endHeap []end

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].job.Seq < h[b].job.Seq
}
func (h endHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(end)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
