// Command qalter changes attributes of queued or running jobs:
// "qalter [options] job_identifier...", with qsub's attribute options
// (reference/pbs-behaviour.md §5.2), parsed by internal/qsubopt.
//
// Each id is trimmed (cmdutil.NormalizeJobID) and altered in turn with the
// same attributes. A failing id prints "qalter: <message> <id>" and the
// others are still tried; the exit status is that of the last failure, 0
// when all succeed. Usage errors print a usage line and exit 2. Nothing is
// printed on success.
package main
