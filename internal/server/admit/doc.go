// Package admit is the server's handler of a job entering a queue, by
// noun: what qsub, qmove, the router and qalter of resources check and
// apply, all of it the queue's and the server's attributes enforced,
// never a decision of what runs. Enqueue takes a job into an execution
// queue (enabled, from_route_only, max_queuable and max_user_queuable,
// max_array_size, the queue's ACLs, its resources_default, default_chunk
// and resources_min/max and the server's, the entity limits max_queued
// and queued_jobs_threshold) or a route queue (forwarded to the first
// destination that takes it, or kept to be routed again); Routable says
// whether the router may move a job now. NormalResources and
// CheckResourceLimits are the defaults and limits alone (submission
// filters, growth of a running job); CheckGrowth re-checks an elastic
// job's growth against the resource limits of its queue and the server,
// per user and group too; CheckLimitStyles refuses mixing
// OpenPBS's old-style limits and entity limits (qmgr); CheckShrinkToFit
// is what qsub and qalter refuse of shrink-to-fit jobs (the walltime a
// start sets is internal/server/starts').
//
// Who calls: internal/server, with its state locked (for reading at
// least), through a View of the state tables it makes (handlers.go). The
// package keeps nothing, has no lock and does no I/O; a job it admits is
// a changed copy, the one given is left as it was.
package admit

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/resc"
)

// View is what admission reads: the job table (counts, entities, arrays),
// the queue table, the server object and the resource table every value
// is read with.
type View struct {
	Jobs   *state.Jobs
	Queues *state.Queues
	Server *model.Object
	Table  *resc.Table
}

// Caller is who submits or moves the job, as far as a queue's
// acl_groups looks: the groups the server found for the caller's account.
type Caller struct {
	Groups []string
}
