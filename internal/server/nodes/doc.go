// Package nodes is the server's handler of what it shows of nodes, by
// noun: pbsnodes's and the schedulers' node status (every node each
// cycle), the state shown for a node (free, job-busy, job-exclusive,
// busy by load, down, offline...), the jobs and reservations on each,
// the load limits by which a node is busy, as moms decide it, and what a
// mom's report says of the jobs on its node (Reconcile: the server takes
// in what both run and acts on the rest).
//
// Who calls: internal/server, with its state locked for reading at least
// (the status route, the metrics, a mom's report). It reads the state
// tables only (internal/server/state), through a View the server makes,
// keeps nothing, has no lock of its own and does no I/O: a status is
// streamed through the proto.StatusFrames the server hands it, which may
// let the server's lock go while a slow reader catches up.
package nodes
