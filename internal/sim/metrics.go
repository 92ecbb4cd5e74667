package sim

import (
	"math"
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
	Users    []Group `json:"users"`
	Queues   []Group `json:"queues"`
}

// Group is one user's or queue's share.
type Group struct {
	Name    string  `json:"name"`
	Jobs    int     `json:"jobs"`
	AvgWait float64 `json:"avg_wait_s"`
	AvgBSLD float64 `json:"avg_bsld"`
}

// BSLD is the bounded slowdown of one started job.
func BSLD(o Outcome) float64 {
	wait := float64(o.Start - o.Job.Submit)
	run := float64(o.Job.Run)
	return math.Max(1, (wait+run)/math.Max(run, Tau))
}

// Measure computes the metrics of a replay on a machine of procs
// processors.
func Measure(outs []Outcome, procs int) Metrics {
	var m Metrics
	var waits []float64
	var area float64
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	users, queues := map[string]*acc{}, map[string]*acc{}
	for _, o := range outs {
		first = min(first, o.Job.Submit)
		if o.Start < 0 {
			m.NotStarted++
			continue
		}
		m.Jobs++
		wait := float64(o.Start - o.Job.Submit)
		b := BSLD(o)
		waits = append(waits, wait)
		m.AvgWait += wait
		m.AvgBSLD += b
		area += float64(o.Job.Run) * float64(max(o.Job.Procs, 1))
		last = max(last, o.End)
		for _, g := range []struct {
			m    map[string]*acc
			name string
		}{{users, o.Job.User}, {queues, o.Job.Queue}} {
			a := g.m[g.name]
			if a == nil {
				a = &acc{}
				g.m[g.name] = a
			}
			a.n++
			a.wait += wait
			a.bsld += b
		}
	}
	if m.Jobs == 0 {
		return m
	}
	m.AvgWait /= float64(m.Jobs)
	m.AvgBSLD /= float64(m.Jobs)
	sort.Float64s(waits)
	m.MedianWait = waits[len(waits)/2]
	m.P95Wait = waits[min(len(waits)-1, len(waits)*95/100)]
	m.MaxWait = waits[len(waits)-1]
	m.Makespan = last - first
	if m.Makespan > 0 && procs > 0 {
		m.Utilization = area / (float64(procs) * float64(m.Makespan))
	}
	m.Users = groups(users)
	m.Queues = groups(queues)
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

type acc struct {
	n          int
	wait, bsld float64
}

func groups(m map[string]*acc) []Group {
	out := make([]Group, 0, len(m))
	for name, a := range m {
		out = append(out, Group{Name: name, Jobs: a.n, AvgWait: a.wait / float64(a.n), AvgBSLD: a.bsld / float64(a.n)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}
