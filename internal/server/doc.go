// Package server is pbs_server's core: it owns the server, queue, node and
// job objects, answers the commands' requests, admits new jobs
// (admission.go: submission filters, then queue attributes), and persists
// every change through the store before answering.
//
// Files by role: conn.go (connections and dispatch), admission.go and
// subfilters.go (qsub), alter.go (qalter), control.go (delete, hold,
// signal, suspend, rerun), queries.go (status, select), run.go (starts
// and the mom calls), lifecycle.go (a running job's phases, its end,
// requeue, a start taken back: every end goes through finish), arrays.go
// and depend.go (what arrays and dependencies add to those), nodes.go
// (their moms' reports), staging.go (staging grants), timers.go,
// sched.go (the scheduler link), mgr.go (qmgr), move.go (qmove).
// The state is the tables of internal/server/state: jobs, with every
// index and count kept of them, reservations, nodes and queues; the job
// table's update path (Update, Transit) is the only way a job in it
// changes. Handler packages by noun take part of the requests, each
// through a narrow interface or view of the state the server gives it
// (handlers.go): internal/server/management (qmgr's resources, queues and
// nodes), internal/server/jobs (the queries on jobs),
// internal/server/nodes (what is shown of nodes) and internal/server/resvs
// (what reservations hold and show). A job's state changes only through
// its transitions (internal/model/transition.go), run on that path;
// internal/archtest fails on a direct write.
//
// Concurrency: one goroutine per connection reads a request, handles it and
// writes the reply. Reads of the state take mu for reading. Every durable
// change runs as a function inside the store's Committer, which holds mu
// for writing across the function and the commit, so readers never see a
// change that is not yet durable, and changes made by one function are
// visible to the next function of the same group (queue limits stay exact
// under concurrent submissions).
package server
