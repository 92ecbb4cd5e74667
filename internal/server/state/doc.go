// Package state is the server's state layer. Jobs is the table of every
// job, array parent and subjob that is a job of its own, kept in listing
// order, with the indices and counters derived from it (per-queue counts
// by state, per-user and per-entity counts for the queue and entity
// limits, the resources running jobs hold on each node, the nodes held
// exclusively, each array's counts of its subjobs, the finished subjobs'
// ends) and the version every change of a job takes.
//
// Its update path is the only way a job in the table changes: Update and
// Transit take a job out of every index, run the caller's change and put
// it back, so no index can go stale; Transit also returns the hooks of
// the transition the change made, which the caller must run in the same
// commit (internal/archtest fails on hooks dropped). Insert and Remove are
// the only ways in and out.
//
// Who calls: internal/server, with its mu held (for writing around every
// change, for reading at least around every query). Jobs has no lock of
// its own and does no I/O: saving a change and running its hooks is the
// caller's, inside its store commit. The jobs it holds are the caller's
// to read under that lock; the slices and maps it returns are its own and
// valid until the next change.
//
// Resvs is the reservation table, on the same terms: the reservations by
// number, what each holds of each node read once per change of its nodes
// (every start checks what the running ones hold), and, in memory only,
// the recent denials and the retries a cycle was asked for. Nodes is the
// node table: each node's attributes (replaced whole on a change), what
// its mom last reported, and the amounts of consumable resources it has
// available, typed once per change of either or of the resource table,
// so that a start reads numbers rather than converting every node's
// text. Queues is the queue table, each queue replaced whole on a change.
package state
