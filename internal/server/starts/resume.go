package starts

import (
	"fmt"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Resumable verifies that every chunk of j's exec_vnode fits on its node
// now, beside what the other jobs hold (placed exclusively: alone on it,
// or on its host).
func (v View) Resumable(j *model.Job) error {
	excl, host := false, false
	if req, err := j.Request(); err == nil {
		excl, host = req.Place.Exclusive(), req.Place.Sharing == resc.SharingExclHost
	}
	need := map[string]resc.Amounts{}
	var order []string
	for _, a := range j.Assigned() {
		if need[a.Node] == nil {
			need[a.Node] = resc.Amounts{}
			order = append(order, a.Node)
		}
		need[a.Node].AddTimes(a.Amounts, 1)
	}
	free := map[string]int{}
	cands := v.Free(order, host)
	for i, nf := range cands {
		free[nf.Name] = i
	}
	for _, node := range order {
		i, ok := free[node]
		if !ok {
			return proto.Errorf(proto.PBSE_RESCUNAV, "(node %s is not up)", node)
		}
		nf := cands[i]
		if excl && !nf.Idle || host && !nf.HostIdle {
			return proto.Errorf(proto.PBSE_RESCUNAV, "(node %s is not free of other jobs)", node)
		}
		for r, want := range need[node] {
			if nf.Free[r] < want {
				return proto.Errorf(proto.PBSE_RESCUNAV, "(node %s has %s of %s free; the job needs %s)", node, fmtAmount(nf.Free[r]), r, fmtAmount(want))
			}
		}
	}
	return nil
}

// fmtAmount writes an amount without a needless fraction.
func fmtAmount(v float64) string { return fmt.Sprintf("%g", v) }
