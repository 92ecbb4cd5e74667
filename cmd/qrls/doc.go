// Command qrls removes holds from jobs: a job whose last hold goes shows Q
// again (or W while its -a time is ahead).
//
// Usage: qrls [-h hold_list] job_id...
//
//   - hold_list is one or more of u (user), o (operator), s (system) and
//     p (bad password); the default is u. Which holds a caller may set or
//     clear is the server's decision (reference §4.2).
//   - Every operand is a job id in any form the server resolves; surrounding
//     whitespace is ignored. Each gets its own request, in order.
//   - A failure prints "qrls: <message> <id>" on stderr and the exit status
//     is that of the last failure; 0 when all succeeded. Nothing is printed
//     on stdout. Usage errors (no operand, a bad hold list) exit 2.
package main
