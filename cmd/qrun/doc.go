// Command qrun tells the server to run jobs now, whatever the scheduler
// would decide. Only operators and managers may; the job must be queued or
// held (reference §1.5, §5.2).
//
// Usage: qrun [-H node[+node...]] [-a] job_id...
//
//   - -H names the execution hosts (passed to the server as given, which
//     checks them); without it the server chooses. -a (asynchronous) is
//     accepted.
//   - Every operand is a job id in any form the server resolves; surrounding
//     whitespace is ignored. Each gets its own request, in order.
//   - A failure prints "qrun: <message> <id>" on stderr and the exit status
//     is that of the last failure; 0 when all succeeded. Nothing is printed
//     on stdout. Usage errors (no operand, an empty -H) exit 2.
package main
