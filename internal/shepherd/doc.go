// Package shepherd is a job's shepherd: the process pbs_mom starts for
// each job (pbs_shepherd --shepherd <jobdir>, or pbs_mom --shepherd
// <jobdir> when pbs_shepherd is not installed beside it), in a session of
// its own. It starts the job script as the owner, copies the job's
// staged files around it (internal/stagecopy), runs the prologue and the
// epilogue (pelog.go), enforces the walltime, carries out a delete
// (TERM, then KILL after the kill delay), kills its job the moment its
// mom's lease lapses (lease.go), waits for the script and writes the exit
// status and usage to the job directory's result file. For an interactive
// job it runs the owner's shell on a terminal relayed to qsub instead of
// the script (interactive.go).
//
// The shepherd does not depend on the mom, so restarting or killing
// pbs_mom neither kills jobs nor loses their exit status: the mom finds
// the job directories again at start and reports every result until the
// server has acknowledged it. The job directory (jobfiles.go) is the
// whole contract between the two: the mom writes the job file (the start
// request, the owner's account as the mom resolved it, the settings of
// mom_priv/config the shepherd needs, the name of the job's TMPDIR),
// the script, the node file and, to
// delete the job, a marker; the shepherd writes its pid, the job's
// session, what it is copying and the result, and holds a lock while it
// lives. The mom also reads the processes of a shepherd's job
// (session.go) and hands a job a recycled TMPDIR the shepherd checks
// (tmpdir.go). When its mom confines jobs, the job file names the job's
// cgroup: the shepherd starts the job in it, ends the whole job when the
// kernel kills in it for the memory limit, and kills everything in it,
// counts and removes it at the end (cgroup.go).
//
// Who calls: pbs_shepherd's and pbs_mom's main call Run; internal/mom
// uses the job directory's files and formats, the lease file, TMPDIR
// names and session processes from here. This package imports nothing of
// the mom's.
package shepherd
