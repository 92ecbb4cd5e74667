package server

import (
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/proto"
)

// hostNodes lists every node on the hosts of nodes (mu held).
func (s *Server) hostNodes(nodes []string) []string {
	hosts := map[string]bool{}
	for _, n := range nodes {
		hosts[s.hostOf(n)] = true
	}
	var out []string
	for name := range s.nodes.All() {
		if hosts[s.hostOf(name)] {
			out = append(out, name)
		}
	}
	return out
}

// hostOf is the host a node is on: its resources_available.host, else
// its name (mu held).
func (s *Server) hostOf(node string) string {
	if _, ok := s.nodes.Get(node); ok {
		if h, ok := s.nodes.AvailOne(node, proto.ResHost); ok && h != "" {
			return h
		}
	}
	return node
}

// markIdle sets what an exclusive placement needs to know of the
// candidates: whether no job runs on each (Idle) and, when the job asks
// for whole hosts, on any node of its host (HostIdle); a node held
// exclusively shows nothing free (mu held).
func (s *Server) markIdle(cands []*place.Node, hosts bool) {
	busyHost := map[string]bool{}
	if hosts {
		for name := range s.nodes.All() {
			if s.jobs.JobsOn(name) > 0 || s.jobs.Exclusively(name) {
				busyHost[s.hostOf(name)] = true
			}
		}
	}
	for _, nf := range cands {
		nf.Idle = s.jobs.JobsOn(nf.Name) == 0 && !s.jobs.Exclusively(nf.Name)
		nf.HostIdle = hosts && !busyHost[s.hostOf(nf.Name)]
		if s.jobs.Exclusively(nf.Name) {
			for r := range nf.Free {
				nf.Free[r] = 0
			}
		}
	}
}
