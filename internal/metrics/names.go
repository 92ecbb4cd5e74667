package metrics

// Metric names, each defined once (README.md's table lists them), in
// Prometheus's conventions: a pbs_<daemon>_ prefix, _total for counters,
// _seconds for durations. The labels of each are in its comment.
const (
	// pbs_server.
	ServerJobs           = "pbs_server_jobs"                          // gauge {queue, state}
	ServerSubmissions    = "pbs_server_job_submissions_total"         // counter {queue}
	ServerEnds           = "pbs_server_job_ends_total"                // counter {queue, result}
	ServerRequeues       = "pbs_server_job_requeues_total"            // counter {queue}
	ServerRequestSeconds = "pbs_server_request_duration_seconds"      // histogram {type}
	ServerCommitSeconds  = "pbs_server_store_commit_duration_seconds" // histogram
	ServerCommitBatch    = "pbs_server_store_commit_batch_size"       // histogram
	ServerCommitFailures = "pbs_server_store_commit_failures_total"   // counter
	ServerNodes          = "pbs_server_nodes"                         // gauge {state}
	ServerConnections    = "pbs_server_connections"                   // gauge {class}, and the connection family below

	// pbs_sched.
	SchedCycles         = "pbs_sched_cycles_total"                 // counter
	SchedPhaseSeconds   = "pbs_sched_cycle_phase_duration_seconds" // histogram {phase}
	SchedStarted        = "pbs_sched_jobs_started_total"           // counter
	SchedBackfilled     = "pbs_sched_jobs_backfilled_total"        // counter
	SchedRefused        = "pbs_sched_jobs_refused_total"           // counter {reason}
	SchedFairshareUsage = "pbs_sched_fairshare_usage_seconds"      // gauge {entity}
	SchedConnections    = "pbs_sched_connections"                  // gauge {class}, and the connection family below

	// pbs_mom.
	MomJobsRunning = "pbs_mom_jobs_running"      // gauge
	MomStarts      = "pbs_mom_job_starts_total"  // counter
	MomLeaseAge    = "pbs_mom_lease_age_seconds" // gauge
	MomLease       = "pbs_mom_lease_seconds"     // gauge
	MomOOMKills    = "pbs_mom_oom_kills_total"   // counter
	MomConnections = "pbs_mom_connections"       // gauge {class}, and the connection family below
)

// Each daemon's connection family is its ...Connections name (connections
// held, by class) and these suffixes of it, by class too: connections not
// yet established, newcomers refused for want of room, pending ones closed
// to make room (connlimit.Stats).
const (
	PendingSuffix = "_pending"
	RefusedSuffix = "_refused_total"
	EvictedSuffix = "_evicted_total"
)

// Label values of ServerEnds's result.
const (
	EndOK      = "ok"      // exit status 0
	EndFailed  = "failed"  // a non-zero exit status, or it could not run
	EndDeleted = "deleted" // qdel, or a dependency that can no longer be met
)

// Label values of SchedPhaseSeconds's phase: a cycle reads the server's
// state (fetch), runs the policy (decide), and sends its starts and
// comments (apply).
const (
	PhaseFetch  = "fetch"
	PhaseDecide = "decide"
	PhaseApply  = "apply"
)

// RequestOther is the type label of requests of a type this build does
// not name (their number is not a label: a peer could make many).
const RequestOther = "other"

// ListenerClass is the connlimit class of a metrics listener, as the
// connection family's class label shows it.
const ListenerClass = "metrics"
