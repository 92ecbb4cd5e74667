// Command qdel deletes jobs: a queued job is removed, a running one is
// signalled (SIGTERM, then SIGKILL after the kill delay) by the server.
//
// Usage: qdel [-W force|<delay>|suppress_email=<n>] [-x] [-p] job_id...
//
//   - Every operand is a job id in any form the server resolves (canonical,
//     bare sequence number, seq.otherserver); surrounding whitespace is
//     ignored. Each is deleted with its own request, in order.
//   - -W force (and Torque's -p, purge) deletes without waiting for the
//     execution host. A delay and suppress_email are accepted and left to
//     the server's defaults; -x (also delete history) is accepted.
//   - A failure prints "qdel: <message> <id>" on stderr ("Unknown Job Id",
//     Torque "Unknown Job Id Error"; "Job has finished" for a finished job)
//     and the exit status is that of the last failure (153, 35 ...); 0 when
//     every id was deleted. Nothing is printed on stdout. Usage errors
//     (no operand, a bad option) exit 2.
package main
