// Package connlimit admits connections to a daemon's listeners under
// budgets, so that no peer can take what commands and daemons need.
//
// Every listener of pbs_server, pbs_mom and pbs_sched puts each accepted
// connection through a Limiter before reading a byte from it. A Limiter
// holds one class of peers (local Unix-socket callers, or remote TCP
// peers): a daemon gives each class its own Limiter, so that junk from other
// hosts cannot lock out local commands. Within a class it bounds
//
//   - connections at once, and connections at once from one peer (a uid on
//     a Unix socket, an IP address over TCP; the HTTP listeners' Listener
//     counts all of this host's addresses as one peer, HostKey, since any
//     local user can connect from each of them; a peer given TrustPeer is
//     bounded by the class alone);
//   - pending connections, those that have not yet proved who they are
//     (finished their handshake, or sent their first authenticated frame),
//     in all and per peer. A pending connection that would exceed these
//     bounds does not refuse the newcomer: the oldest pending connection in
//     that scope is closed instead. Honest peers finish their handshake in
//     milliseconds, so an attacker holding many silent connections loses
//     them to the next honest connection rather than locking it out.
//
// Refusals are logged at most once per LogEvery, with the number left
// unlogged, so a flood does not become a flood of log lines.
//
// Who calls: a listener's accept loop calls Admit; the connection's
// goroutine calls Established once the peer proved itself and Release
// when it ends. All methods are safe for concurrent use.
package connlimit
