// Package sched is the toolkit for writing scheduler binaries: the Go
// counterpart of the classic scheduler's main program. It listens for the
// server, dispatches its events, reads and reloads the sched_priv files,
// logs to sched_logs, keeps two schedulers off one PBS_HOME, handles
// signals, fetches the state of the server, queues, nodes and jobs into a
// read-only Snapshot, calls the site's Policy, and carries out the
// decisions the policy made.
//
// A policy is business logic only: it receives the cycle (time, event,
// snapshot, configuration) and records decisions on it (Run, Comment,
// Hold, Delete). It does no I/O of its own, so the same policy runs in the
// live scheduler, in tests and in a simulator. The server re-checks every
// decision against live state; a refused start becomes the job's comment.
//
// A minimal scheduler binary:
//
//	func main() { sched.Main(&myPolicy{}) }
package sched
