// Package management is the server's handler for qmgr's requests, by
// noun: so far the custom resources (qmgr's "create resource", "set
// resource", "delete resource", and the list and print of them, which
// schedulers read too), the queues (create, set, unset, delete; qstat -Q
// and qmgr's list of them) and the nodes (create, set, unset, delete; the
// nodes file at start goes through the same). The server's own
// attributes and the sched object are still the server's (mgr.go,
// schedobj.go).
//
// Who calls: internal/server's routes, once the caller's privileges are
// known; Queues.Manage and Nodes.Manage run inside the server's qmgr
// commit, after its checks of the attributes against their definitions
// and the caller's privileges. Each handler reaches the server only
// through a narrow interface (Store, QueueStore, NodeStore): a commit or
// a read that holds the server's state locked, the state tables
// (internal/server/state), the resource table, and for queues the
// server's attributes to replace. It keeps nothing of its own, has no
// lock and starts no goroutine.
package management
