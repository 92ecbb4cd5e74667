package state

import (
	"strconv"

	"github.com/gopbs/gopbs/internal/model"
)

// counters keeps per-queue job counts by state and per-user counts of
// unfinished jobs, so queue limits are checked without scanning all jobs.
type counters struct {
	byQueueState map[string]*[8]int
	// subjobsByQueueState counts the subjobs that are jobs of their own.
	subjobsByQueueState map[string]*[8]int
	byQueueUser         map[string]map[string]int
	byUser              map[string]int
	unfinished          int
	// assigned sums the consumable resources of running jobs per node,
	// from their exec_vnode (resources_assigned, and free space for
	// placement).
	assigned map[string]map[string]float64
	// version counts job changes; every job carries the count of its last
	// change. It is never reset, so it only grows while the server runs.
	version uint64
	// entity counts, per scope and entity, the unfinished jobs that are
	// not arrays and what they ask for, for OpenPBS's max_queued limits
	// (entities.go); arrays are the unfinished array parents, counted
	// live (their subjobs change state without their parent changing).
	entity map[entityKey]*EntityCount
	arrays map[*model.Job]bool
}

// stateSlots names the slots of a queue's counts by state, in
// state_count's order.
var stateSlots = [8]string{"Transit", "Queued", "Held", "Waiting", "Running", "Exiting", "Begun", "Finished"}

// stateSlot orders states as state_count prints them.
func stateSlot(st model.JobState) int {
	switch st {
	case model.StateTransit:
		return 0
	case model.StateQueued:
		return 1
	case model.StateHeld:
		return 2
	case model.StateWaiting:
		return 3
	case model.StateRunning:
		return 4
	case model.StateExiting:
		return 5
	case model.StateFinished:
		return 7
	}
	return 6 // Begun
}

func (c *counters) reset() {
	c.byQueueState = map[string]*[8]int{}
	c.subjobsByQueueState = map[string]*[8]int{}
	c.byQueueUser = map[string]map[string]int{}
	c.byUser = map[string]int{}
	c.unfinished = 0
	c.assigned = map[string]map[string]float64{}
	c.entity = map[entityKey]*EntityCount{}
	c.arrays = map[*model.Job]bool{}
}

func (c *counters) bump(j *model.Job, d int) {
	byState := c.byQueueState
	if j.IsSubjob {
		// Shown in state_count; the limits count the array once, by its
		// parent.
		byState = c.subjobsByQueueState
	}
	qs := byState[j.Queue]
	if qs == nil {
		qs = &[8]int{}
		byState[j.Queue] = qs
	}
	qs[stateSlot(j.State)] += d
	if j.Holding() {
		for _, a := range j.Assigned() {
			m := c.assigned[a.Node]
			if m == nil {
				m = map[string]float64{}
				c.assigned[a.Node] = m
			}
			for r, v := range a.Amounts {
				m[r] += float64(d) * v
			}
		}
	}
	if j.Finished() || j.IsSubjob {
		return
	}
	c.unfinished += d
	u := j.User()
	m := c.byQueueUser[j.Queue]
	if m == nil {
		m = map[string]int{}
		c.byQueueUser[j.Queue] = m
	}
	m[u] += d
	if m[u] == 0 {
		delete(m, u)
	}
	c.byUser[u] += d
	if c.byUser[u] == 0 {
		delete(c.byUser, u)
	}
	c.countEntities(j, d)
}

func (c *counters) add(j *model.Job) {
	c.version++
	j.Version = c.version
	c.bump(j, 1)
}
func (c *counters) remove(j *model.Job) { c.bump(j, -1) }

// touch marks j changed for incremental status fetches without any
// count changing.
func (c *counters) touch(j *model.Job) {
	c.version++
	j.Version = c.version
}

// Queued is how many unfinished jobs queue q holds (an array once).
func (t *Jobs) Queued(q string) int {
	qs := t.counts.byQueueState[q]
	if qs == nil {
		return 0
	}
	n := 0
	for i, v := range qs {
		if i != 7 {
			n += v
		}
	}
	return n
}

// QueuedBy is how many unfinished jobs user u has in queue q ("" for
// every queue).
func (t *Jobs) QueuedBy(q, u string) int {
	if q == "" {
		return t.counts.byUser[u]
	}
	return t.counts.byQueueUser[q][u]
}

// Unfinished is how many jobs are not finished (an array once).
func (t *Jobs) Unfinished() int { return t.counts.unfinished }

// Assigned is what the running jobs on node hold of each consumable
// resource (the table's own map: read it only).
func (t *Jobs) Assigned(node string) map[string]float64 { return t.counts.assigned[node] }

// QueueStates sums each queue's jobs and subjobs by state slot
// (stateSlots), for the metrics; a queue whose counts are all zero is left
// out.
func (t *Jobs) QueueStates() map[string][8]int {
	out := map[string][8]int{}
	for _, m := range []map[string]*[8]int{t.counts.byQueueState, t.counts.subjobsByQueueState} {
		for q, counts := range m {
			sum, live := out[q]
			for i, n := range counts {
				sum[i] += n
				live = live || n != 0
			}
			if live {
				out[q] = sum
			}
		}
	}
	return out
}

// StateCount renders "Transit:0 Queued:1 ..." for a queue, or for the
// server when q is "", with the total.
func (t *Jobs) StateCount(q string) (string, int) {
	var total [8]int
	for _, byState := range []map[string]*[8]int{t.counts.byQueueState, t.counts.subjobsByQueueState} {
		for name, qs := range byState {
			if q != "" && name != q {
				continue
			}
			for i, v := range qs {
				total[i] += v
			}
		}
	}
	out := ""
	sum := 0
	for i, n := range stateSlots[:7] {
		out += n + ":" + strconv.Itoa(total[i]) + " "
		sum += total[i]
	}
	return out, sum
}
