package server

import (
	"slices"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// holdings counts what running jobs hold of each node, for place=excl and
// exclhost: a job placed exclusively needs nodes no other job runs on (for
// exclhost, every node of their hosts), and nothing else may start beside
// it. It is kept by track and untrack, so it is exact whenever mu is
// released. The nodes an exclusive job holds are remembered with it: a
// host's nodes may change while it runs, and its release must undo what
// its start counted.
type holdings struct {
	jobsOnNode map[string]int
	exclNode   map[string]int // exclusive jobs holding the node
	exclBy     map[model.JobKey][]string
}

func (h *holdings) reset() {
	*h = holdings{jobsOnNode: map[string]int{}, exclNode: map[string]int{}, exclBy: map[model.JobKey][]string{}}
}

// sharing is the sharing of j's place when it is exclusive (excl or
// exclhost), else SharingUnset.
func sharing(j *model.Job) resc.Sharing {
	if req, err := j.Request(); err == nil && req.Place.Exclusive() {
		return req.Place.Sharing
	}
	return resc.SharingUnset
}

// hold counts running job j in (d = 1) or out (d = -1) of the nodes it
// runs on and, placed exclusively, holds (mu held).
func (s *Server) hold(j *model.Job, d int) {
	if !j.Holding() {
		return // a job suspended to preempt it holds nothing
	}
	nodes := assignedNodes(j)
	for _, node := range nodes {
		s.held.jobsOnNode[node] += d
	}
	key := j.Key()
	if d < 0 {
		for _, node := range s.held.exclBy[key] {
			s.held.exclNode[node]--
		}
		delete(s.held.exclBy, key)
		return
	}
	switch sharing(j) {
	case resc.SharingExcl:
	case resc.SharingExclHost:
		nodes = s.hostNodes(nodes)
	default:
		return
	}
	for _, node := range nodes {
		s.held.exclNode[node]++
	}
	s.held.exclBy[key] = nodes
}

// hostNodes lists every node on the hosts of nodes (mu held).
func (s *Server) hostNodes(nodes []string) []string {
	hosts := map[string]bool{}
	for _, n := range nodes {
		hosts[s.hostOf(n)] = true
	}
	var out []string
	for name := range s.nodes {
		if hosts[s.hostOf(name)] {
			out = append(out, name)
		}
	}
	return out
}

// hostOf is the host a node is on: its resources_available.host, else
// its name (mu held).
func (s *Server) hostOf(node string) string {
	if n, ok := s.nodes[node]; ok {
		if h, ok := s.availOne(n, s.runtime[node], proto.ResHost); ok && h != "" {
			return h
		}
	}
	return node
}

// exclusively reports whether a running job holds node whole (mu held).
func (s *Server) exclusively(node string) bool { return s.held.exclNode[node] > 0 }

// markIdle sets what an exclusive placement needs to know of the
// candidates: whether no job runs on each (Idle) and, when the job asks
// for whole hosts, on any node of its host (HostIdle); a node held
// exclusively shows nothing free (mu held).
func (s *Server) markIdle(cands []*place.Node, hosts bool) {
	busyHost := map[string]bool{}
	if hosts {
		for name := range s.nodes {
			if s.held.jobsOnNode[name] > 0 || s.exclusively(name) {
				busyHost[s.hostOf(name)] = true
			}
		}
	}
	for _, nf := range cands {
		nf.Idle = s.held.jobsOnNode[nf.Name] == 0 && !s.exclusively(nf.Name)
		nf.HostIdle = hosts && !busyHost[s.hostOf(nf.Name)]
		if s.exclusively(nf.Name) {
			for r := range nf.Free {
				nf.Free[r] = 0
			}
		}
	}
}

// assignedNodes lists the distinct nodes j runs on, in order.
func assignedNodes(j *model.Job) []string {
	var out []string
	for _, a := range j.Assigned() {
		if !slices.Contains(out, a.Node) {
			out = append(out, a.Node)
		}
	}
	return out
}
