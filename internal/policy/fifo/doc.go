// Package fifo is the default scheduling policy of pbs_sched: the classic
// FIFO scheduler (reference §2.4). Each cycle it orders the queued jobs
// (sort_by / multi-sort keys, by_queue, round_robin, sort_queues,
// strict_fifo, help_starving_jobs), then tries them in order with the
// checks of reference §2.4 step 5, in that order: server and queue
// max_running, max_user_run and max_group_run; the dedicated-time
// boundary; starvation; nodes (a placement on nodes that are up with the
// resources free, and loadave below max_load); queue and server resources
// (mem, ncpus, nodect: resources_available minus assigned, else
// resources_max as a per-job cap, else unlimited). The first failing check
// becomes the job's comment ("Not Running: ..."); a started job's comment
// is "Job started on <date>"; a job that cannot fit even on empty nodes is
// deleted.
//
// The policy is pure: it reads a sched.Snapshot and records decisions on
// the sched.Cycle; the time comes from the cycle.
package fifo
