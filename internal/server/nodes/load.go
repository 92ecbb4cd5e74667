package nodes

import (
	"strconv"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/proto"
)

// LoadLimits are node n's ideal and max load: set on the node (qmgr, or
// resources_available), else as its mom's config says (rt, its runtime);
// -1 when unset. Without an ideal load the node is free again below its
// max load.
func LoadLimits(t *state.Nodes, n *model.Object, rt *state.Runtime) (ideal, maxLoad float64) {
	ideal, maxLoad = rt.Status.IdealLoad, rt.Status.MaxLoad
	read := func(name string, into *float64) {
		v, ok := t.AvailOne(n.Name, name)
		if !ok {
			v, ok = n.Get(name)
		}
		if ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				*into = f
			}
		}
	}
	read(proto.AttrNodeMaxLoad, &maxLoad)
	read(proto.AttrNodeIdealLoad, &ideal)
	if ideal < 0 || ideal > maxLoad {
		ideal = maxLoad
	}
	return ideal, maxLoad
}

// Overloaded decides whether node n is busy by load, as moms do
// (reference §6): busy once its load is above max_load, and free again
// only when it is below ideal_load, so that a load hovering at the limit
// does not flip the node at every report.
func Overloaded(t *state.Nodes, n *model.Object, rt *state.Runtime) bool {
	if n == nil {
		return false
	}
	ideal, maxLoad := LoadLimits(t, n, rt)
	load := rt.Status.Loadave
	switch {
	case maxLoad < 0:
		return false
	case load > maxLoad:
		return true
	case rt.LoadBusy:
		return load >= ideal && !(ideal == maxLoad && load <= maxLoad)
	}
	return false
}
