// Command qalter changes attributes of queued or running jobs:
// "qalter [options] job_identifier...", with qsub's attribute options
// (reference/pbs-behaviour.md §5.2), parsed by internal/qsubopt. Managers
// and operators may also hold a job until a time with
// "-W hold_until=[[CC]YY]MMDDhhmm[.SS]" or Unix seconds (0 lets it go).
//
// Each id is trimmed (cmdutil.NormalizeJobID) and altered in turn with the
// same attributes. A failing id prints "qalter: <message> <id>" and the
// others are still tried; the exit status is that of the last failure, 0
// when all succeed. Usage errors print a usage line and exit 2. Nothing is
// printed on success.
package main
