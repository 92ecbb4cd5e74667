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
// sched_priv is reloaded when a file in it changes, on SIGHUP and on the
// server's CONFIGURE. A file with an error is refused as a whole: the
// previous policy stays, and the reason, with file and line, goes to
// sched_logs and to the server's comment (qstat -Bf) at the server's next
// contact, until a good file loads; a holidays file for another year is
// shown the same way. Every log line carries a PBS event class (package
// logclass) and sched_config's log_filter drops classes. "-t [DIR]" checks
// a sched_priv directory without running (Check).
//
// A minimal scheduler binary:
//
//	func main() { sched.Main("my_sched", &myPolicy{}) }
package sched
