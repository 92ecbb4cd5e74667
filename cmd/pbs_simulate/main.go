// Command pbs_simulate replays a workload through the scheduling policy of
// pbs_sched (the same core, policy and sched_priv files) under a virtual
// clock, and reports what users would have waited:
//
//	pbs_simulate [--sched-priv DIR] [--procs N | --nodes FILE | --from-server] [--json] [--csv FILE]
//	             [--svg DIR] [--format swf|accounting] [--elastic FRACTION [--seed N]]
//	             [--reservations FILE] [--compare DIR_A DIR_B] TRACE
//
// TRACE is a Standard Workload Format file (gzip accepted), Alea's
// extended SWF (with TRACE.machines beside it: one node per machine node,
// jobs placed by their PBS node spec), or this server's accounting logs.
// Without --sched-priv the shipped defaults decide. The replay follows
// the conventions of the Parallel Workloads Archive (machine size
// MaxProcs, processors and walltimes as requested, see internal/trace).
//
// An SWF trace is streamed: read one job at a time, each job's outcome
// counted and written out when it is final, so memory follows the queue
// (jobs submitted and not finished), not the trace. A trace out of
// submit order by more than internal/trace's window of 4,096 jobs is
// replayed again from memory (said on stderr); accounting logs are read
// whole (see internal/trace). --compare reads the trace once per replay.
// --csv rows come in the order jobs finish (at one instant in start
// order), then the jobs that never started in trace order; job numbers
// that grow with the file, as the archive's do, sort back to its order.
//
// # Elastic jobs
//
// A job may be elastic: it runs on between a minimum and a maximum of
// processors, and the policy grows it or takes processors back while it
// runs (sched_config scheduling_mode queued or balanced; see
// examples/sim/queued and examples/sim/balanced, and --compare them). An
// SWF trace gives a job's range in two more fields, 19 and 20 (see
// internal/trace), and --elastic FRACTION makes that fraction of the
// trace's other jobs elastic, drawn with --seed (1 by default; the same
// seed makes the same jobs elastic): minimum half the job's processors
// (rounded up), maximum twice, capped by the machine. An elastic job's
// speed follows the work-conserving model of malleable-job studies: its
// work is its run time x its processors as the trace gives them; it works
// at one processor-second per second on each processor it holds, so when
// its allocation changes its remaining run time (and its walltime, the
// estimate) is rescaled so that the work left stays the same; see
// sched/sim. Its bounded slowdown is (end - submit) / max(run time in
// the trace, 10 s), at least 1, and it counts its work in utilization.
//
// Processors are given back by node (the server releases whole nodes), so
// an elastic replay lays the machine out in nodes: with --elastic (even
// 0, for a trace whose elastic jobs are all its own) and no --procs,
// --nodes, --from-server or .machines file, the machine is the header's
// MaxNodes nodes of MaxProcs/MaxNodes processors (MaxProcs nodes of one
// when MaxNodes does not divide it); with --procs N, N nodes of one. On a
// machine of several nodes a job without a node spec asks for its
// processors as chunks of one cpu, on any nodes (an elastic one for
// MIN-MAX:ncpus=1), so a rigid job takes the processors it would on one
// node of them all.
//
// # Preemption
//
// With preemptive_sched on in sched_config the replay preempts as
// pbs_sched does (see sched/sim): a job of a higher rank suspends or
// requeues running jobs of a lower one (the simulated moms have no
// checkpoint action, so C never applies; every trace job is
// rerunnable), and suspended jobs resume when their processors are free.
// --express FRACTION puts that fraction of the trace's jobs, drawn with
// --seed, in queue express, whose priority is sched_config's
// preempt_queue_prio: --compare a sched_priv with preemptive_sched off
// and one with it on to see the express queue's wait (the queues table)
// with and without preemption, and what it costs the others.
package main

import "github.com/gopbs/gopbs/internal/cli/simulate"

func main() { simulate.Main() }
