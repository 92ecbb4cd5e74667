// Command qsig sends a signal to running jobs.
//
// Usage: qsig [-s signal] [-a] job_id...
//
//   - The signal is a name with or without SIG (TERM, SIGKILL), a number, or
//     suspend/resume; the default is SIGTERM. It is passed to the server as
//     given, which validates it (PBSE_UNKSIG) and requires the job to be
//     running (PBSE_BADSTATE). -a (asynchronous) is accepted.
//   - Every operand is a job id in any form the server resolves; surrounding
//     whitespace is ignored. Each gets its own request, in order.
//   - A failure prints "qsig: <message> <id>" on stderr and the exit status
//     is that of the last failure; 0 when all succeeded. Nothing is printed
//     on stdout. Usage errors (no operand, an empty signal) exit 2.
package main
