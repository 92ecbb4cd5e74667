package proto

// Negative Exit_status values for jobs that could not start or were killed
// by the system, with OpenPBS's numbers (JOB_EXEC_* in its job.h). A job
// killed by a signal exits 256+signal; one that ran exits with its code.
const (
	JobExecOK           = 0
	JobExecFail1        = -1  // failed before the output files existed
	JobExecFail2        = -2  // failed after the output files existed
	JobExecRetry        = -3  // failed to start, may be retried
	JobExecInitAbort    = -4  // aborted when the mom started
	JobExecFailUID      = -10 // no valid uid/gid for the job's owner
	JobExecRerun        = -11 // requeued
	JobExecKillWalltime = -29 // killed for exceeding its walltime
)

// ExitSignalBase is added to a signal number for a job killed by it.
const ExitSignalBase = 256
