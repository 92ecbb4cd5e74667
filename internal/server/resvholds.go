// What reservations hold on every start: the nodes and amounts of the
// confirmed ones in their windows, which a job outside them may not take.

package server

import (
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/proto"
)

// resvHolds is what running reservations keep of each node now, less
// what their own jobs use there: the amounts no other job may take, and
// the reservation of each (mu held). The jobs are gone through once, for
// all the reservations.
func (s *Server) resvHolds(now int64) map[string]map[string]float64 {
	var byQueue map[string]map[string]map[string]float64 // queue -> node -> held
	for r := range s.resvs.All() {
		if !(r.Start() <= now && now < r.End()) || r.State == proto.ResvUnconfirmed || r.State == proto.ResvBeingDeleted {
			continue
		}
		held, err := s.resvs.Held(r)
		if err != nil {
			continue
		}
		if r.Place == "exclhost" || strings.HasPrefix(r.Place, "excl") {
			for node := range held {
				held[node] = s.wholeNode(node)
			}
		}
		if byQueue == nil {
			byQueue = map[string]map[string]map[string]float64{}
		}
		byQueue[r.Queue()] = held
	}
	if byQueue == nil {
		return nil
	}
	for _, j := range s.jobs.List() {
		held := byQueue[j.Queue]
		if held == nil || !j.Active() {
			continue
		}
		for _, a := range j.Assigned() {
			if m := held[a.Node]; m != nil {
				for k, v := range a.Amounts {
					m[k] -= v
				}
			}
		}
	}
	out := map[string]map[string]float64{}
	for _, held := range byQueue {
		for node, m := range held {
			if out[node] == nil {
				out[node] = map[string]float64{}
			}
			for k, v := range m {
				out[node][k] += max(v, 0)
			}
		}
	}
	return out
}

// wholeNode is every consumable a node has (mu held).
func (s *Server) wholeNode(node string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s.nodes.Available(node) {
		if s.rt().Consumable(k) {
			if x, ok := s.rt().Number(k, v); ok {
				out[k] = x
			}
		}
	}
	return out
}

// resvAllows applies reservations to a start (mu held): a job of a
// reservation's queue runs only while it runs and only on its nodes, in
// what it reserved there; any other job only in what running
// reservations leave of a node.
func (s *Server) resvAllows(j *model.Job, free []*place.Node, now int64) error {
	if r := s.resvOf(j.Queue); r != nil {
		id := r.ID(s.cfg.ServerName)
		if !(r.Start() <= now && now < r.End()) || r.State != proto.ResvRunning && r.State != proto.ResvDegraded {
			return proto.Errorf(proto.PBSE_BADSTATE, "(reservation %s is %s: its jobs run only in its window)", id, r.State)
		}
		mine, _ := s.resvs.Held(r)
		excl := r.Place == "exclhost" || strings.HasPrefix(r.Place, "excl")
		// What the reservation's running jobs use on each of its nodes.
		var used map[string]map[string]float64
		if !excl {
			used = map[string]map[string]float64{}
			for _, o := range s.jobs.List() {
				if o.Queue != r.Queue() || !o.Active() {
					continue
				}
				for _, a := range o.Assigned() {
					if mine[a.Node] == nil {
						continue
					}
					u := used[a.Node]
					if u == nil {
						u = map[string]float64{}
						used[a.Node] = u
					}
					for k, v := range a.Amounts {
						u[k] += v
					}
				}
			}
		}
		for _, n := range free {
			m, ok := mine[n.Name]
			if !ok {
				n.Free = map[string]float64{} // not the reservation's
				n.Idle, n.HostIdle = false, false
				continue
			}
			if excl {
				continue
			}
			for k := range n.Free {
				n.Free[k] = min(n.Free[k], m[k]-used[n.Name][k])
			}
		}
		return nil
	}
	holds := s.resvHolds(now)
	for _, n := range free {
		if h := holds[n.Name]; h != nil {
			for k, v := range h {
				n.Free[k] -= v
			}
			n.Idle, n.HostIdle = false, false
		}
	}
	return nil
}
