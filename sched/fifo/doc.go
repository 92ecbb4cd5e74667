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
// is "Job started on <date>"; a job that cannot fit even on empty nodes stays
// queued with the comment "Can Never Run: ..." (OpenPBS's).
//
// With backfill (sched_config backfill, on by default) it is EASY
// backfilling: the first job that cannot start for want of nodes gets a
// reservation at its earliest start in the cycle's calendar; later jobs,
// within backfill_depth, start only where they cannot delay it (they end
// before it by their walltime, or fit beside it); a job without a walltime
// is never backfilled. strict_fifo and help_starving_jobs keep their
// meaning: the job they would block for takes the reservation.
//
// The policy is a pipeline of extension points (pipeline.go): an order,
// checks returning core.Status, a node ranking and activation hooks. It is
// pure: a core.World in, a core.Plan out; the time comes from the world.
// The package is public so that a site scheduler outside this module can
// reuse the pipeline and change one point: DefaultPipeline, then replace
// its Order or Ranking or add a Check, in a fifo.Policy run by
// sched.Main (examples/site_ranking adds one Ranking).
package fifo
