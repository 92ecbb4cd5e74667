// Package activation runs activation filters for pbs_sched (DESIGN §7):
// the I/O side of the FIFO pipeline's Activation hook. When the pipeline
// has found resources for a queued job, Filters runs the job's queue's
// activation_filters and then sched_config's activation_filter lines, in
// order, on the job's JSON file (package filter has the calling contract,
// package jobjson the file), and turns the first non-zero exit into the
// core.Status the pure pipeline acts on:
//
//	0                      start it (every filter must say 0)
//	1                      core.Block: not started, nor anything of equal
//	                       or lower priority after it this cycle
//	2, any other code,     core.Keep: not started, its candidate resources
//	a timeout, a missing   stay reserved for it this cycle
//	program
//	3                      core.WaitUntil: held until its hold_until (a
//	                       filter may set it with qalter before exiting),
//	                       else now + default_hold_duration; resources
//	                       released
//	4                      core.Never: the job fails, its comment naming
//	                       the filter
//
// In a backfill window any code but 0, 3 and 4 only refuses the start
// (core.NotNow): the gap belongs to the top job's reservation. The
// filters that said 0 before a non-zero one are called again, last first,
// with --revert. Each outcome names the filter and its result in the
// job's comment.
//
// Context in the environment, besides PBS_FILTER_KIND=activation and
// PBS_FILTER_JOB_ID: PBS_FILTER_PASS (the scheduler's cycle count since it
// started), PBS_FILTER_JOB_INDEX (the job's place in the cycle's order, 1
// first), PBS_FILTER_BACKFILL (1 for a backfill start, else 0),
// PBS_FILTER_RESOURCE_COUNT (the cpus of the candidate placement),
// PBS_FILTER_EXEC_VNODE (the placement, as exec_vnode shows it),
// PBS_FILTER_QUEUE and PBS_FILTER_USER.
//
// Who calls: pbs_sched's main builds NewPolicy; the toolkit's runner
// calls BeginCycle with the cycle's connection before each Schedule, and
// the pipeline calls Activate, one job at a time, on the cycle's
// goroutine.
package activation
