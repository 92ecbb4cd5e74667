// Command qwait waits for jobs to end, on the server's event stream: it
// reads the jobs' state once, then is told of each change as it commits,
// without polling.
//
//	qwait [-x] [-t timeout] job_id...
//
// Every operand is a job id in any form the server resolves: a job, an
// array ("12[]": every subjob), a subjob ("12[3]") or a range of subjobs
// ("12[1-5]"). qwait returns when every job (every subjob of an array)
// has ended. See usageText (main.go) for the output and the exit status,
// and README.md ("Watching jobs") for the event stream behind it.
package main
