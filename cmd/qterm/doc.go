// Command qterm stops the batch server, and on request the scheduler and
// the moms.
//
// Usage: qterm [-m] [-s] [-t immediate|delay|quick] [server]
//
//   - The server answers, then stops taking requests, ends any scheduling
//     cycle, commits what it holds and exits. Running jobs keep running
//     under their moms and report their ends when the server is back
//     (quick, the default). delay is the same here because there is no
//     checkpointing; immediate (stop every running job) is refused by the
//     server with PBSE_NOSUP.
//   - -s also tells the scheduler to quit (SCH_QUIT); -m tells every node's
//     mom to stop (their jobs keep running under their shepherds).
//   - The optional operand names the server; it must be the configured one
//     (PBS_SERVER, short or full name).
//   - -f, -F and -i concern failover servers, which this system does not
//     have: they are refused as usage errors.
//   - Needs operator or manager privilege (PBSE_PERM otherwise). Errors print
//     "qterm: <message>"; the exit status is the PBSE code mod 256, 2 for a
//     usage error, 0 on success.
package main
