// Package hookrun runs site hooks (package hook) the way OpenPBS's
// scripts expect, but never inside a daemon: each run is a process of its
// own, forked from one Python interpreter (the zygote, Debian's python3)
// that has the pbs module loaded, so a run costs a fork rather than
// Python's start-up.
//
// The contract of a run:
//
//   - The daemon and the run's process talk over a socket pair of their
//     own (the channel), in frames of a 4-byte big-endian length and a
//     JSON object. The process first says its pid; the daemon sends the
//     request (the hook's script, the event as data, what may be changed,
//     the server's name and attributes, the resource types); the process
//     may then send log lines (pbs.logmsg) and lookups (pbs.server().job,
//     queue, vnode...) that the daemon answers, and ends with one
//     verdict: accept with the changes made, reject with a message, or
//     an exception with its traceback.
//   - The process is the leader of a session of its own; at the hook's
//     alarm the daemon kills the whole group, so a hook that forks
//     cannot outlive it. Its address space is bounded (RLIMIT_AS) and so
//     is what it may send; its standard streams are /dev/null.
//   - A pbsuser hook's process becomes the job's owner (initgroups,
//     setgid, setuid) before the hook's code runs.
//   - The changes are data the daemon checks like any other request;
//     nothing the hook does reaches the daemon's state otherwise.
//
// Who calls: pbs_server for its events, pbs_mom for the execution
// host's, each with one Runner; Run holds no lock of theirs and must be
// called outside theirs (a hook may take up to its alarm).
package hookrun
