// Package jobs is the server's handler of the queries on jobs, by noun:
// qstat's and the schedulers' job status (streamed, incremental for a
// scheduler that says which version it has), and qselect's selection with
// its criteria, each as the caller may see it.
//
// Who calls: internal/server's routes, with its state locked for reading
// (handlers.go makes the View). The package reads the state tables only
// (internal/server/state), keeps nothing, has no lock of its own and does
// no I/O: a status is streamed through the proto.StatusFrames the server
// hands it, which may let the server's lock go while a slow reader
// catches up, and the walk goes on after the last job it sent.
package jobs
