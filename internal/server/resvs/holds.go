package resvs

import (
	"maps"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// View is the server's state as the reservation handler reads it, under
// the server's lock.
type View struct {
	Resvs *state.Resvs
	Nodes *state.Nodes
	Jobs  *state.Jobs
	// Server is the server's attributes (resv_enable, acl_resv_users).
	Server *model.Object
	// Table is the resource table the reservations' nodes are read with.
	Table *resc.Table
	// ServerName completes reservation ids.
	ServerName string
}

// Holds is what running reservations keep of each node at now, less
// what their own jobs use there: the amounts no other job may take. The
// jobs are gone through once, for all the reservations.
func (v View) Holds(now int64) map[string]map[string]float64 {
	var byQueue map[string]map[string]map[string]float64 // queue -> node -> held
	for r := range v.Resvs.All() {
		if !(r.Start() <= now && now < r.End()) || r.State == proto.ResvUnconfirmed || r.State == proto.ResvBeingDeleted {
			continue
		}
		held, err := v.Resvs.Held(r)
		if err != nil {
			continue
		}
		if r.Place.Exclusive() {
			for node := range held {
				held[node] = maps.Clone(v.Nodes.Amounts(node)) // the whole node
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
	for _, j := range v.Jobs.List() {
		held := byQueue[j.Queue]
		if held == nil || !j.Active() {
			continue
		}
		for _, a := range j.Assigned() {
			if m := held[a.Node]; m != nil {
				for k, x := range a.Amounts {
					m[k] -= x
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
			for k, x := range m {
				out[node][k] += max(x, 0)
			}
		}
	}
	return out
}

// Allows applies reservations to the start of j at now on the
// candidates free, which it narrows: a job of a reservation's queue runs
// only while it runs and only on its nodes, in what it reserved there;
// any other job only in what running reservations leave of a node.
func (v View) Allows(j *model.Job, free []*place.Node, now int64) error {
	if r, ok := v.Resvs.OfQueue(j.Queue); ok {
		id := r.ID(v.ServerName)
		if !(r.Start() <= now && now < r.End()) || r.State != proto.ResvRunning && r.State != proto.ResvDegraded {
			return proto.Errorf(proto.PBSE_BADSTATE, "(reservation %s is %s: its jobs run only in its window)", id, r.State)
		}
		mine, _ := v.Resvs.Held(r)
		excl := r.Place.Exclusive()
		// What the reservation's running jobs use on each of its nodes.
		var used map[string]map[string]float64
		if !excl {
			used = map[string]map[string]float64{}
			for _, o := range v.Jobs.List() {
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
					for k, x := range a.Amounts {
						u[k] += x
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
	holds := v.Holds(now)
	for _, n := range free {
		if h := holds[n.Name]; h != nil {
			for k, x := range h {
				n.Free[k] -= x
			}
			n.Idle, n.HostIdle = false, false
		}
	}
	return nil
}
