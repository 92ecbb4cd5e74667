package admit

import (
	"maps"
	"slices"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// CheckGrowth re-checks a growth of j to sel (its select at the count it
// would hold) against the limits as they are now: resources_max
// of j's queue and of the server, and the per-user and per-group
// resource limits of both (max_user_res, max_group_res), counting what
// the owner's and the group's other running jobs hold. A growth is a plan
// of the scheduler's like a start: the server does not take it on trust.
func (v View) CheckGrowth(j *model.Job, sel resc.Select) error {
	rl := j.ResourceList
	for name, total := range sel.Totals() {
		rl = rl.Set(name, total)
	}
	q, _ := v.Queues.Get(j.Queue)
	if q == nil {
		q = model.NewObject(j.Queue)
	}
	if err := v.CheckResourceLimits(rl, q); err != nil {
		return err
	}
	grown := holding(sel)
	for _, scope := range []struct {
		obj   *model.Object
		queue string
	}{{v.Server, ""}, {q, j.Queue}} {
		for _, lim := range []struct {
			attr, kind, name string
			same             func(o *model.Job) bool
		}{
			{proto.AttrMaxUserRes, "user", j.EUser, func(o *model.Job) bool { return o.EUser == j.EUser }},
			{proto.AttrMaxGroupRes, "group", j.EGroup, func(o *model.Job) bool { return o.EGroup == j.EGroup }},
		} {
			limits := scope.obj.Resources[lim.attr]
			if len(limits) == 0 {
				continue
			}
			held := resc.Amounts{}
			for _, o := range v.Jobs.List() {
				if o == j || !o.Active() || (o.Suspended && o.Substate == model.SubSchedSusp) || !lim.same(o) || (scope.queue != "" && o.Queue != scope.queue) {
					continue
				}
				held.AddTimes(heldBy(o), 1)
			}
			for _, r := range slices.Sorted(maps.Keys(limits)) {
				limit, ok := v.Table.Number(r, limits[r])
				if !ok {
					continue
				}
				if held[r]+grown[r] > limit {
					where := "server"
					if scope.queue != "" {
						where = "queue " + scope.queue
					}
					return proto.Errorf(proto.PBSE_EXCQRESC, "(growth of job %s: %s %s would hold %s of %s, over the %s's %s.%s = %s)",
						j.ID, lim.kind, lim.name, v.Table.Format(r, held[r]+grown[r]), r, where, lim.attr, r, limits[r])
				}
			}
		}
	}
	return nil
}

// holding is what an allocation of sel holds: its chunks' amounts and
// its node count.
func holding(sel resc.Select) resc.Amounts {
	a := sel.Sums()
	a["nodect"] = float64(sel.NodeCount())
	return a
}

// heldBy is what running job o holds: an elastic job the chunks of its
// allocation, any other its request.
func heldBy(o *model.Job) resc.Amounts {
	r, err := o.Request()
	if err != nil {
		return resc.Amounts{}
	}
	if sel, ok := r.Select.WithNodeCount(len(o.Assigned())); ok {
		return holding(sel)
	}
	return holding(r.Select)
}
