// Package mom is pbs_mom, the node agent: it reports what its host has
// (ncpus, physmem, loadave, arch and the static resources of
// mom_priv/config) to the server, runs the jobs the server sends it as
// their owners, watches and kills them, reports their ends, and forwards
// commands typed on its host to the server, vouching for the caller.
//
// Each job runs under a shepherd (internal/shepherd): a separate process
// (pbs_shepherd, a static program installed beside pbs_mom, or pbs_mom
// --shepherd without it) in its own session that starts the job script as
// the owner, enforces the walltime, waits for the script and writes the
// exit status and usage to mom_priv/jobs/<id>/result. The shepherd does
// not depend on the mom, so restarting or killing pbs_mom neither kills
// jobs nor loses their exit status: the mom finds the job directories
// again at start and reports every result until the server has
// acknowledged it. An acknowledged job's directory and its TMPDIR are
// emptied and kept for the next jobs (jobdirs.go) rather than removed: a
// job start then makes almost no new inode.
//
// The package's files hold one role each: agent.go (the Mom, its start
// and stop), serve.go (the mom port and the local socket: the server's
// requests, other moms'), serverlink.go (status reports, job ends and the
// lease), start.go (starting a job's shepherd), watch.go (finding job
// ends, sampling usage, forgetting acknowledged jobs), signal.go (signals,
// deletes, suspend and resume: a freeze of the job's cgroup, else
// SIGSTOP and SIGCONT), relay.go (local commands forwarded to the server),
// earlystage.go (early stage-ins and the files other moms ask for),
// jobdirs.go (recycled job directories and TMPDIRs), momconfig.go and
// configapply.go (mom_priv/config), nodecheck.go (the node health check,
// $node_check_script), cgroups.go (confinement: mom_priv/cgroups, each
// job's cgroup, the cpus of the jobs' cpusets), sysinfo.go (the host's
// facts).
//
// File staging: a job's shepherd copies its stage-in files before the
// script and its stage-out files after it; the mom itself copies them for
// an early stage-in the server asks for. Files on another node are read
// or written by that node's mom, which accepts connections from other
// moms (RoleMom, the cluster key) for exactly one transfer of a file the
// server granted (proto.StageToken). The copies themselves, always made
// with the owner's credentials, are internal/stagecopy's.
package mom
