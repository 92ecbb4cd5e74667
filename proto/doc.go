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

// Attribute values on the wire
//
// Every attribute value is a string, as in PBS's attropl, in these forms:
//
//   - times (ctime, qtime, mtime, etime, stime, Execution_Time, obittime,
//     hold_until, last_state_change_time, ...): decimal Unix seconds;
//     commands format them as ctime(3) strings ("Mon Jan  1 00:00:00 2024").
//   - booleans: "True" or "False".
//   - job_state: one letter of T Q H W R E F S. A finished job is F; a
//     command in the torque personality shows it as C.
//   - Exit_status: a decimal integer (0-255 from the script, 256+signal when
//     killed, negative JOB_EXEC codes when the job could not start).
//   - sizes: an integer with a lower-case unit, "300mb", "1048576kb";
//     durations: "HH:MM:SS" with hours of any width.
//   - Variable_List: "NAME=value,NAME=value"; a comma or backslash inside a
//     value is escaped with a backslash.
//   - exec_host: "node/0*2+node2/0"; exec_vnode: "(node:ncpus=2)+(node2:ncpus=1)".
//   - stagein, stageout: "local@host:remote,..." (internal/stage), a comma
//     inside a name escaped with a backslash.
//
// Status replies list attributes in OpenPBS's qstat -f order, with the
// resources of a resource-list attribute (Resource_List, resources_used,
// resources_available, ...) sorted by name.
