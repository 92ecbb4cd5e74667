// What reservations hold on every start: the nodes and amounts of the
// confirmed ones in their windows, which a job outside them may not take.

package server

import (
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/internal/resvspec"
	"github.com/gopbs/gopbs/proto"
)

// resvHolds is what running reservations keep of each node now, less
// what their own jobs use there: the amounts no other job may take, and
// the reservation of each (mu held).
func (s *Server) resvHolds(now int64) map[string]map[string]float64 {
	var out map[string]map[string]float64
	for _, r := range s.resvs {
		if !(r.Start() <= now && now < r.End()) || r.State == proto.ResvUnconfirmed || r.State == proto.ResvBeingDeleted {
			continue
		}
		held, err := resvspec.Amounts(s.rt(), r.Nodes())
		if err != nil {
			continue
		}
		if r.Place == "exclhost" || strings.HasPrefix(r.Place, "excl") {
			for node := range held {
				held[node] = s.wholeNode(node)
			}
		}
		for _, j := range s.jobList {
			if j.Queue != r.Queue() || !j.Active() {
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
		if out == nil {
			out = map[string]map[string]float64{}
		}
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
	for k, v := range s.nodeAvailable(node) {
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
		mine, _ := resvspec.Amounts(s.rt(), r.Nodes())
		for _, n := range free {
			m, ok := mine[n.Name]
			if !ok {
				n.Free = map[string]float64{} // not the reservation's
				n.Idle, n.HostIdle = false, false
				continue
			}
			if r.Place == "exclhost" || strings.HasPrefix(r.Place, "excl") {
				continue
			}
			used := map[string]float64{}
			for _, o := range s.jobList {
				if o.Queue == r.Queue() && o.Active() {
					for _, a := range o.Assigned() {
						if a.Node == n.Name {
							for k, v := range a.Amounts {
								used[k] += v
							}
						}
					}
				}
			}
			for k := range n.Free {
				n.Free[k] = min(n.Free[k], m[k]-used[k])
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

// nodeResvs lists the reservations that hold each node, confirmed and
// not over (pbsnodes shows them as the node's resv; mu held).
func (s *Server) nodeResvs() map[string][]string {
	out := map[string][]string{}
	for _, seq := range s.resvSeqs() {
		r := s.resvs[seq]
		if r.State == proto.ResvUnconfirmed || r.State == proto.ResvBeingDeleted {
			continue
		}
		for _, n := range model.NodeNames(r.Nodes()) {
			out[n] = append(out[n], r.ID(s.cfg.ServerName))
		}
	}
	return out
}
