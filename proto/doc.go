// Package proto defines everything that crosses a socket between the
// commands, pbs_server, pbs_sched and pbs_mom: the frame format, the message
// envelope and its append-only type codes, request and reply bodies,
// attribute names, PBSE error codes with their OpenPBS texts, cluster-key
// authentication, and a typed client that every command uses.
//
// A connection carries length-prefixed frames. Each frame holds one msgpack
// encoded Envelope and, on authenticated daemon connections, a trailing
// HMAC-SHA256 tag. The first exchange on every connection is a Hello and a
// HelloReply that agree on the protocol version.
//
// Nothing in this package keeps global mutable state; codes and names are
// constants so that they are defined exactly once for the whole system.
package proto
