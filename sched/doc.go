// Package sched is the toolkit for writing scheduler binaries: the Go
// counterpart of the classic scheduler's main program. It listens for the
// server, dispatches its events, reads and reloads the sched_priv files,
// logs to sched_logs, keeps two schedulers off one PBS_HOME, handles
// signals, fetches what changed on the server since its last cycle (the
// server's version counter) and turns it into a typed core.World (its
// edge: each changed job's request parsed once, nothing past it reads
// attribute text), calls the site's Policy (core.Policy), and carries out
// the core.Plan the policy returns: starts with their exact placement (a
// node per chunk), comments, holds, deletes.
//
// A policy is business logic only: it receives the world, the event and a
// logger and returns a plan. It does no I/O of its own, so the same policy
// runs in the live scheduler, in tests and in the simulator (sched/sim).
// The server re-checks every decision against live state; a refused start
// becomes the job's comment.
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
