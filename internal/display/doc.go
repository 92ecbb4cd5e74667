// Package display renders status replies the way the PBS commands print
// them, in either client personality (DESIGN §9): the default job table,
// its wide variant, the alternate (-a) table with node (-n) and comment
// (-s) lines, the full (-f) listing, PBS Pro's -F json and -F dsv, Torque's
// -x XML, the queue (-Q, -Qf, -q) and server (-B, -Bf) displays, and
// pbsnodes' -F json document (nodesjson.go, which the web API serves too).
//
// Contract:
//
//   - Pure formatting. Functions take the objects, an Options value and an
//     io.Writer; they never dial, read files or look at the clock: "now" and
//     the time zone come in through Options, so every output is a function
//     of its inputs and tests compare exact strings.
//   - Input attributes are as the server sends them (OpenPBS names, times in
//     Unix seconds, job_state F for finished jobs). The torque personality
//     renames for display (Exit_status -> exit_status, stime -> start_time),
//     shows F as C and folds the other OpenPBS-only state letters into the
//     Q R E C H W S set that Torque clients know. Inputs are never modified.
//   - Column layouts, truncation marks, headers and wrapping follow
//     OpenPBS 23.06 and Torque 6.1 (reference/pbs-behaviour.md §5.3, §5.4,
//     client-contract.md §3). Where those programs have a bug that loses or
//     corrupts data (strtok dropping empty list items, a trailing lone-TAB
//     line, bytes cut inside a UTF-8 sequence, invalid JSON numbers), the
//     intended behaviour is implemented and the tests say so.
//   - Machine formats always parse: JSON output is valid JSON (valid UTF-8,
//     every string escaped, a "Jobs" object even when empty) and XML output
//     is well-formed with one line per <Data> document, whatever bytes the
//     attribute values hold.
//   - Table cells never contain whitespace, so that clients splitting rows
//     on blanks (Parsl, Toil, ERT read column 1 and column 5) see the
//     columns; a missing value prints as a placeholder, never as nothing.
//   - Full listings never put a raw newline inside a value: a newline shows
//     as the two characters \n, other control characters in caret notation
//     (^A), so blocks stay separated by exactly one blank line.
package display
