// Package fairshare is fair share for scheduling policies (reference
// §2.7, the admin guide's "fair share"): a Ledger that counts the cpu
// seconds each user's jobs consume and halves them every half_life, and a
// Standing that ranks users by how far they are below their share of the
// resource_group tree.
//
// # Contract
//
// The package is pure (no files, clocks or sockets; sched/core's purity
// test checks it): the time comes in with the world, and the usage file is
// read and written by the caller (package sched, through
// sched/schedpriv/privdir). A Ledger belongs to one policy and is not safe for
// concurrent use; the policy serialises its cycles.
//
// # What the classic scheduler got wrong, and what is done instead
//
// Usage is cpu time (resources_used.cput) counted once per second of each
// job: the Ledger remembers how much of each job it has counted, across
// restarts (the usage file keeps it), so neither a scheduler restart nor a
// job's last seconds before it ends are lost or counted twice. A rerun
// job's new run counts from zero again. Usage is propagated to the
// groups above a user, and users are compared the way OpenPBS compares
// them: at the first level of the tree where their paths part, the
// branch whose usage is furthest below its share goes first. Within one
// cycle each job picked charges its user the usage it is expected to
// take (its cput request, else walltime x ncpus), so a user far below
// share does not take the whole machine in one cycle (the classic
// temp_usage). Decay halves usage every half_life exactly, in whole
// periods (no integer truncation to 1).
package fairshare
