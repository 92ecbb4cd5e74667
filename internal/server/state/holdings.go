package state

import (
	"slices"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/resc"
)

// holdings counts what running jobs hold of each node, for place=excl and
// exclhost: a job placed exclusively needs nodes no other job runs on (for
// exclhost, every node of their hosts), and nothing else may start beside
// it. It is kept by track and untrack, so it is exact between changes.
// The nodes an exclusive job holds are remembered with it: a host's nodes
// may change while it runs, and its release must undo what its start
// counted.
type holdings struct {
	jobsOnNode map[string]int
	exclNode   map[string]int // exclusive jobs holding the node
	exclBy     map[model.JobKey][]string
}

func (h *holdings) reset() {
	*h = holdings{jobsOnNode: map[string]int{}, exclNode: map[string]int{}, exclBy: map[model.JobKey][]string{}}
}

// Sharing is the sharing of j's place when it is exclusive (excl or
// exclhost), else SharingUnset.
func Sharing(j *model.Job) resc.Sharing {
	if req, err := j.Request(); err == nil && req.Place.Exclusive() {
		return req.Place.Sharing
	}
	return resc.SharingUnset
}

// AssignedNodes lists the distinct nodes j runs on, in order.
func AssignedNodes(j *model.Job) []string {
	var out []string
	for _, a := range j.Assigned() {
		if !slices.Contains(out, a.Node) {
			out = append(out, a.Node)
		}
	}
	return out
}

// hold counts running job j in (d = 1) or out (d = -1) of the nodes it
// runs on and, placed exclusively, holds.
func (t *Jobs) hold(j *model.Job, d int) {
	if !j.Holding() {
		return // a job suspended to preempt it holds nothing
	}
	h := &t.held
	nodes := AssignedNodes(j)
	for _, node := range nodes {
		h.jobsOnNode[node] += d
	}
	key := j.Key()
	if d < 0 {
		for _, node := range h.exclBy[key] {
			h.exclNode[node]--
		}
		delete(h.exclBy, key)
		return
	}
	switch Sharing(j) {
	case resc.SharingExcl:
	case resc.SharingExclHost:
		nodes = t.cfg.HostNodes(nodes)
	default:
		return
	}
	for _, node := range nodes {
		h.exclNode[node]++
	}
	h.exclBy[key] = nodes
}

// Exclusively reports whether a running job holds node whole.
func (t *Jobs) Exclusively(node string) bool { return t.held.exclNode[node] > 0 }

// JobsOn is how many running jobs hold part of node.
func (t *Jobs) JobsOn(node string) int { return t.held.jobsOnNode[node] }
