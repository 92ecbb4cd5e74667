// Package resvs is the server's handler of what reservations hold and
// show, by noun: what the running ones keep of each node at every start
// (Holds), how a start of a job in or out of a reservation is narrowed to
// what it may take (Allows), the check of the nodes a scheduler confirms
// one with against the others that hold them at the same time
// (CheckNodes), and pbs_rstat (Status). Their submission, changes, clock
// and verdicts are still the server's (resv*.go), reached through its
// commit.
//
// Who calls: internal/server, with its state locked (for reading at
// least), through a View of the state tables (internal/server/state) it
// makes (handlers.go). The package keeps nothing, has no lock and does no
// I/O.
package resvs
