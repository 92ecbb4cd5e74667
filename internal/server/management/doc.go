// Package management is the server's handler for qmgr's requests on the
// site's own definitions, by noun: so far the custom resources (qmgr's
// "create resource", "set resource", "delete resource", and the list and
// print of them, which schedulers read too).
//
// Who calls: internal/server's routes, once the caller's privileges are
// known. The handler reaches the server only through the narrow Store
// interface: a commit that holds the server's state locked for writing
// around the change, the state tables to read (internal/server/state),
// and the resource table to read and replace. It keeps nothing of its
// own, has no lock and starts no goroutine.
package management
