// Package management is the server's handler for qmgr's requests, by
// noun: so far the custom resources (qmgr's "create resource", "set
// resource", "delete resource", and the list and print of them, which
// schedulers read too) and the queues (create, set, unset, delete; qstat
// -Q and qmgr's list of them). The server, the nodes and the sched object
// are still the server's own (mgr.go, schedobj.go).
//
// Who calls: internal/server's routes, once the caller's privileges are
// known (Queues.Manage inside the server's qmgr commit, whose attribute
// checks against the definitions and privileges it has made). Each
// handler reaches the server only through a narrow interface (Store,
// QueueStore): a commit or a read that holds the server's state locked,
// the state tables (internal/server/state), the resource table, and for
// queues the server's attributes to replace. It keeps nothing of its own,
// has no lock and starts no goroutine.
package management
