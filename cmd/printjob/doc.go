// Command printjob prints a job's server record for administrators, in the
// shape of OpenPBS's printjob:
//
//	printjob [-a] job_id...
//	printjob --version
//
// The record is read through pbs_server (a status request with history,
// so finished jobs too): a header with the job id, its state as OpenPBS's
// number (0x1 queued ... 0x9 finished), substate in hex and decimal,
// stime and queue, then "--attributes--" and every attribute as
// "name[.resource] = value". -a leaves the attributes out (OpenPBS's -a
// means no attributes). It must be run by root, as OpenPBS's.
//
// What is not shown, rather than faked: OpenPBS's svrflgs, ordering,
// inter prior, file base and union fields, which describe its job files and
// have no counterpart in this server's record; -s (the job script) and
// a job file operand, since the script lives in the server's store and no
// request returns it, and there are no job files.
//
// The store is not read directly when the server is down. pbs_server
// holds bbolt's exclusive flock on server_priv/serverdb while it runs, so
// a read-only open (a shared flock) could only wait for it; with the
// server down such an open would be consistent, but it would make a
// server that starts meanwhile wait on the lock, the store of a
// replicated group's member may be behind its leader, and commands do not
// link the daemons' insides (internal/store: ARCHITECTURE.md). With the
// server down printjob says it cannot connect.
//
// The logic is in run, which takes an Env, the arguments and its outside
// world, so that tests drive it against a fake server connection.
package main
