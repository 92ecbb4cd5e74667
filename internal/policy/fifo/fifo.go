package fifo

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"gopbs/internal/resc"
	"gopbs/proto"
	"gopbs/sched"
)

// SortKey orders jobs by one value, ascending unless Descending.
type SortKey struct {
	// Resource names a Resource_List entry; "" with Priority false means
	// no ordering.
	Resource   string
	Priority   bool // the job's Priority attribute
	Descending bool
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
}

// Window is a dedicated-time window.
type Window struct{ From, To time.Time }

// Inputs are what a cycle depends on besides the snapshot.
type Inputs struct {
	Settings Settings
	// Dedicated is the current or next dedicated-time window, nil when
	// none is pending.
	Dedicated *Window
}

// Comments, as the classic scheduler words them.
const (
	cServerLimit      = "Server job limit has been reached."
	cServerUserLimit  = "User has reached server running job limit."
	cServerGroupLimit = "Group has reached server running limit."
	cQueueLimit       = "Queue job limit has been reached."
	cQueueUserLimit   = "User has reached queue running job limit."
	cQueueGroupLimit  = "Group has reached queue running limit."
	cDedBoundary      = "Job would cross dedicated time boundary"
	cStarving         = "Draining system to allow starving job to run"
	cNodes            = "Not enough of the right type of nodes are available"
	cQueueNotExec     = "Queue not an execution queue."
	cQueueNotStarted  = "Queue not started."
	cDedConflict      = "Dedicated time conflict"
	cQueueIgnored     = "Queue is configured to be ignored"
	cStrictFIFO       = "Strict fifo order"
	notRunning        = "Not Running: "
)

// Decide runs one cycle of the FIFO policy.
func Decide(c *sched.Cycle, in Inputs) {
	st := in.Settings
	snap := c.Snapshot
	now := c.Now
	ledger := sched.NewLedger(snap)
	inDed := in.Dedicated != nil && now.After(in.Dedicated.From) && now.Before(in.Dedicated.To)
	isDed := func(q string) bool { return st.DedicatedPrefix != "" && strings.HasPrefix(q, st.DedicatedPrefix) }

	// Queues that may run jobs this cycle, in order.
	queues := append([]*sched.Queue(nil), snap.Queues...)
	if st.SortQueues {
		sort.SliceStable(queues, func(a, b int) bool { return queues[a].Priority > queues[b].Priority })
	}
	queueOK := map[string]string{} // queue -> "" or why its jobs cannot run
	for _, q := range queues {
		switch {
		case !q.Execution:
			queueOK[q.Name] = cQueueNotExec
		case !q.Started:
			queueOK[q.Name] = cQueueNotStarted
		case contains(st.IgnoreQueues, q.Name):
			queueOK[q.Name] = cQueueIgnored
		case inDed != isDed(q.Name):
			queueOK[q.Name] = cDedConflict
		default:
			queueOK[q.Name] = ""
		}
	}

	// Candidates per queue, each list in the sort order.
	perQueue := map[string][]*sched.Job{}
	var all []*sched.Job
	for _, j := range snap.Jobs {
		if !j.Queued() {
			continue
		}
		why, known := queueOK[j.Queue]
		if !known {
			continue
		}
		if why != "" {
			if why != cQueueNotExec {
				c.Comment(j, notRunning+why)
			}
			continue
		}
		perQueue[j.Queue] = append(perQueue[j.Queue], j)
		all = append(all, j)
	}
	less := comparator(st.Sort)
	for _, js := range perQueue {
		sort.SliceStable(js, func(a, b int) bool { return less(js[a], js[b]) })
	}
	sort.SliceStable(all, func(a, b int) bool { return less(all[a], all[b]) })

	// Starvation: the longest-starving eligible job goes first, and the
	// others wait until it has started.
	var starving *sched.Job
	if st.HelpStarving && st.MaxStarve > 0 {
		worst := time.Duration(0)
		for _, j := range all {
			over := now.Sub(time.Unix(j.Qtime, 0)) - st.MaxStarve
			if over > worst && !isDed(j.Queue) {
				worst, starving = over, j
			}
		}
	}

	var order []*sched.Job
	switch {
	case st.StrictFIFO:
		order = append(order, all...)
		sort.SliceStable(order, func(a, b int) bool {
			if order[a].Qtime != order[b].Qtime {
				return order[a].Qtime < order[b].Qtime
			}
			return order[a].Seq < order[b].Seq
		})
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
	if starving != nil {
		order = moveFirst(order, starving)
	}

	blocked := map[string]bool{} // strict fifo: queue (or "" for all) stopped
	nodesKnown := ledger.AllKnown()
	stamp := "Job started on " + now.Format("Mon Jan 02 at 15:04")
	for _, j := range order {
		scope := ""
		if st.ByQueue {
			scope = j.Queue
		}
		if st.StrictFIFO && blocked[scope] {
			c.Comment(j, notRunning+cStrictFIFO)
			continue
		}
		p, why := check(j, snap, ledger, st, in, inDed, now, starving)
		if why == "" {
			c.Run(j, sched.NodesOf(p), stamp)
			ledger.Start(j, p)
			if j == starving {
				starving = nil // once started it no longer holds others back
			}
			continue
		}
		if why == cNodes && nodesKnown {
			if err := ledger.Fits(j); err != nil {
				c.Delete(j, notRunning+"Job could never run: "+err.Error())
				continue
			}
		}
		c.Comment(j, notRunning+why)
		if st.StrictFIFO {
			blocked[scope] = true
		}
	}
}

// check applies the checks of reference §2.4 step 5 in order and returns
// a placement, or the first reason the job cannot run now.
func check(j *sched.Job, snap *sched.Snapshot, l *sched.Ledger, st Settings, in Inputs, inDed bool, now time.Time, starving *sched.Job) ([]sched.Placement, string) {
	srv := snap.Server.Limits
	total, user, group := l.Running("", j.User, j.Group)
	switch {
	case srv.MaxRunning >= 0 && total >= srv.MaxRunning:
		return nil, cServerLimit
	case srv.MaxUserRun >= 0 && user >= srv.MaxUserRun:
		return nil, cServerUserLimit
	case srv.MaxGroupRun >= 0 && group >= srv.MaxGroupRun:
		return nil, cServerGroupLimit
	}
	q := snap.Queue(j.Queue)
	total, user, group = l.Running(j.Queue, j.User, j.Group)
	switch {
	case q.Limits.MaxRunning >= 0 && total >= q.Limits.MaxRunning:
		return nil, cQueueLimit
	case q.Limits.MaxUserRun >= 0 && user >= q.Limits.MaxUserRun:
		return nil, cQueueUserLimit
	case q.Limits.MaxGroupRun >= 0 && group >= q.Limits.MaxGroupRun:
		return nil, cQueueGroupLimit
	}
	if d := in.Dedicated; d != nil {
		wall := j.Walltime()
		end := now.Add(time.Duration(wall) * time.Second)
		switch {
		case wall < 0:
			return nil, cDedBoundary
		case !inDed && end.After(d.From):
			return nil, cDedBoundary
		case inDed && end.After(d.To):
			return nil, cDedBoundary
		}
	}
	if starving != nil && j != starving {
		return nil, cStarving
	}
	p, err := l.Place(j)
	if err != nil {
		return nil, cNodes
	}
	if why := resources(j, q.Name, q.ResourcesAvailable, q.ResourcesMax, l); why != "" {
		return nil, why
	}
	if why := resources(j, "", snap.Server.ResourcesAvailable, snap.Server.ResourcesMax, l); why != "" {
		return nil, why
	}
	return p, ""
}

// resources applies checks 10 and 11: for mem, ncpus and nodect, a
// resource the job requests and the queue or server lists must fit in
// resources_available minus what running jobs hold, or, with only
// resources_max set, under that per-job cap.
func resources(j *sched.Job, queue string, avail, max map[string]string, l *sched.Ledger) string {
	for _, r := range []struct{ name, what string }{{proto.ResMem, "memory"}, {proto.ResNcpus, "cpus"}, {proto.ResNodect, "nodes"}} {
		want, ok := j.Resource(r.name)
		if !ok {
			continue
		}
		var have float64
		if v, ok := avail[r.name]; ok {
			x, _ := resc.Number(r.name, v)
			have = x - l.Assigned(queue, r.name)
		} else if v, ok := max[r.name]; ok {
			have, _ = resc.Number(r.name, v)
		} else {
			continue
		}
		if have < want {
			return fmt.Sprintf("Not enough %s available", r.what)
		}
	}
	return ""
}

// comparator builds a stable ordering from sort keys: keys in order until
// two jobs differ; a job without the value sorts after one with it.
func comparator(keys []SortKey) func(a, b *sched.Job) bool {
	return func(a, b *sched.Job) bool {
		for _, k := range keys {
			var x, y float64
			var okx, oky bool
			switch {
			case k.Priority:
				x, y, okx, oky = float64(a.Priority), float64(b.Priority), true, true
			case k.Resource != "":
				x, okx = a.Resource(k.Resource)
				y, oky = b.Resource(k.Resource)
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

func moveFirst(js []*sched.Job, j *sched.Job) []*sched.Job {
	out := []*sched.Job{j}
	for _, x := range js {
		if x != j {
			out = append(out, x)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
