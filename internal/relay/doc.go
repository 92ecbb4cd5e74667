// Package relay carries a command's connection from a host's Unix socket
// to the server, each request stamped with the caller's identity as the
// kernel reports it (SO_PEERCRED): the way commands reach the server from
// a host that does not run it.
//
// pbs_mom relays for the commands typed on an execution host (RoleMom,
// the cluster key) and pbs_login for a login host's (RoleLogin, the
// host's login key, which lets it vouch for users and nothing else). The
// server honours a stamp only on such an authenticated connection.
//
// Who calls: a daemon's accept loop calls Serve on the connection's own
// goroutine; Serve returns when either side ends it. The Relay is read
// only after construction and shared by every connection.
package relay
