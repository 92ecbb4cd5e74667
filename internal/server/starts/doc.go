// Package starts is the server's check of a start, by noun: what Nomad's
// plan applier is to its schedulers. A scheduler (or qrun) names a job
// and where it runs; Plan checks that against the state as it is now
// (the job startable, its request placed on exactly those nodes, free
// now, exclusivity kept, the reservations' holds respected, a
// shrink-to-fit job's walltime within its bounds) and says what the job
// will hold: its chunks, the typed allocation, its PBS_NODEFILE and the
// walltime the start sets. Resumable is the same check of a preempted
// job's resume on its own chunks. The server never places a job itself;
// it only refuses a plan that cannot hold.
//
// Who calls: internal/server, with its state locked, inside the commit
// that records the start, through a View of the state tables it makes
// (handlers.go). The package keeps nothing, has no lock and does no I/O.
package starts

import (
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/resc"
)

// View is what a start is checked against: the job table (what each node
// runs, exclusive holdings), the node table (state, amounts, hosts, moms)
// and the resource table.
type View struct {
	Jobs  *state.Jobs
	Nodes *state.Nodes
	Table *resc.Table
}
