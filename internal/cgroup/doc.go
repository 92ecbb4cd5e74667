// Package cgroup confines a node's jobs with Linux control groups, v1 or
// v2: each job gets a cgroup of its own (pbs_jobs/<job id> under each
// hierarchy) with its memory limit, its own cpus (a cpuset) or a cpu
// quota, and an optional limit on its processes; its first process is
// born in it, so that every process of the job stays in it whatever
// session or parent it takes; at the job's end everything in it is
// killed, its peak memory and cpu time are read, and it is removed.
// Suspend freezes it whole and resume thaws it (freeze.go: v1's
// freezer hierarchy, used wherever the host mounts it; v2's
// cgroup.freeze).
//
// What is asked for is mom_priv/cgroups (config.go, a pure parser); Open
// finds the host's hierarchies from the mount table and makes the tree's
// directories (tree.go); a Job (job.go) is plain data the mom writes into
// the job's files, so the shepherd and a restarted mom act on the same
// cgroup. Allocator (cpus.go) shares out a node's cpus.
//
// Who calls: internal/mom makes each job's cgroup before its shepherd
// starts (a mom that cannot refuses the start), samples its usage,
// removes what a dead shepherd left and, at start, the cgroups of jobs
// it no longer runs, and freezes and thaws a job for qsig -s suspend
// and resume; internal/shepherd starts the job in it (ForkExec),
// watches it for the kernel's OOM kills, thaws a suspended job it must
// end, and kills, reads and removes it at the job's end. The same calls serve any mom of a job, mother
// superior or sister.
package cgroup
