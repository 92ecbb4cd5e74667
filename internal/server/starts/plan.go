package starts

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Plan is what a start that holds gives the job.
type Plan struct {
	// Chunks are its chunks, each on its node, with what it takes there.
	Chunks []place.Placement
	// Alloc is the allocation the job holds (exec_host and exec_vnode).
	Alloc resc.Alloc
	// Nodefile are its PBS_NODEFILE lines.
	Nodefile []string
	// Walltime is the walltime the start sets (a shrink-to-fit job's),
	// "" when it sets none.
	Walltime string
	// StagedIn: an early stage-in put its files on this very first node,
	// so the mom need not copy them again.
	StagedIn bool
}

// Allows narrows the free nodes to what a start of j at now may take of
// them in or out of a reservation (the server's resvs.View.Allows), or
// refuses the start.
type Allows func(j *model.Job, free []*place.Node, now int64) error

// Plan checks a start of j as r asks for it at now (j is the job as it
// would be stored: a waiting subjob made from its array): j queued or
// held in an execution queue, its request with a select, an elastic
// job's chunk count within its range, the placement naming one node per
// chunk whose amounts are the job's (a scheduler's exact placement), or
// the nodes of qrun -H; those nodes up and free now (exclusive holdings
// and allows' reservations taken into account), the chunks placed on
// exactly them, and a shrink-to-fit job's walltime within its bounds. A
// refusal is the proto.Error the run request answers with.
func (v View) Plan(j *model.Job, r proto.RunSpec, allows Allows, now int64) (Plan, error) {
	switch j.State {
	case model.StateFinished, model.StateExpired:
		return Plan{}, proto.NewError(proto.PBSE_HISTJOBID)
	case model.StateRunning, model.StateExiting, model.StateTransit:
		return Plan{}, proto.Errorf(proto.PBSE_BADSTATE, "(job is %c)", j.State)
	}
	if j.QueueType != "Execution" {
		return Plan{}, proto.Errorf(proto.PBSE_BADSTATE, "(job is in route queue %s)", j.Queue)
	}
	req, err := j.Request()
	if err != nil {
		return Plan{}, proto.Errorf(proto.PBSE_BADATVAL, "Resource_List: %v", err)
	}
	if req.Select == nil {
		return Plan{}, proto.Errorf(proto.PBSE_BADATVAL, "(the job has no select)")
	}
	// An elastic job starts with any number of chunks in its range: as
	// many as the placement names (one node per chunk), else its minimum.
	sel := req.Select
	if sel.Elastic() >= 0 {
		n := len(r.Where)
		if n == 0 {
			n = placementParts(r.Nodes)
		}
		if n <= 1 {
			n = sel.NodeCount()
		}
		var ok bool
		if sel, ok = req.Select.WithNodeCount(n); !ok {
			return Plan{}, proto.Errorf(proto.PBSE_BADATVAL, "(placement names %d nodes for select %s: %d to %d chunks)", n, req.Select, req.Select.NodeCount(), req.Select.MaxNodeCount())
		}
	}
	hosts := r.Where
	if len(hosts) == 0 {
		if hosts, err = placementHosts(r.Nodes, sel); err != nil {
			return Plan{}, err
		}
	} else if n := sel.NodeCount(); len(hosts) != n {
		return Plan{}, proto.Errorf(proto.PBSE_BADATVAL, "(placement names %d nodes for the %d chunks of select %s)", len(hosts), n, sel)
	}
	free := v.Free(hosts, req.Place.Sharing == resc.SharingExclHost)
	if err := allows(j, free, now); err != nil {
		return Plan{}, err
	}
	p, err := place.Chunks(counting(v.Table, sel, r.Counted), req.Place, free, hosts)
	if err != nil {
		return Plan{}, proto.Errorf(proto.PBSE_RESCUNAV, "(%v)", err)
	}
	if len(r.Counted) > 0 {
		assignWhole(p, sel)
	}
	wall, err := ChosenWalltime(j, r.Walltime)
	if err != nil {
		return Plan{}, err
	}
	alloc, nodefile := place.AllocOf(p, v.Nodes.MomOf)
	return Plan{Chunks: p, Alloc: alloc, Nodefile: nodefile, Walltime: wall,
		StagedIn: j.StagePhase == model.StageDone && j.StageNode == v.Nodes.MomOf(p[0].Node)}, nil
}
