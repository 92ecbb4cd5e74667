// Package resvs is the server's handler of reservations, by noun: what
// the running ones keep of each node at every start (holds.go: Holds),
// how a start of a job in or out of a reservation is narrowed to what it
// may take (Allows), the check of the nodes a scheduler confirms one with
// against the others that hold them at the same time (check.go:
// CheckNodes), pbs_rstat (Status), the clock's step for each (clock.go:
// Due, Advance, RetryDue) and a scheduler's verdict on one (verdict.go:
// Judge), and pbs_rsub's and pbs_ralter's reservation (submit.go: New,
// Admit with resv_enable, acl_resv_users and maintenance of whole hosts,
// QueueOf and SetACL, MayChange, Altered). The server stores what they
// change and does the rest of each step (its jobs, its queue, mail,
// accounting) in resv.go, resvchange.go, resvclock.go and
// resvverdict.go.
//
// Who calls: internal/server, with its state locked (for reading at
// least), through a View of the state tables (internal/server/state) it
// makes (handlers.go). The package keeps nothing, has no lock and does no
// I/O.
package resvs
