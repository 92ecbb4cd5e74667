package proto

// Attribute names, defined once for the whole system. The spellings are
// OpenPBS's (src/include/pbs_ifl.h); Torque spellings that differ are marked.

// Job attributes.
const (
	AttrJobName          = "Job_Name"
	AttrJobOwner         = "Job_Owner"
	AttrResourcesUsed    = "resources_used"
	AttrJobState         = "job_state"
	AttrQueue            = "queue"
	AttrServer           = "server"
	AttrAccountName      = "Account_Name"
	AttrCheckpoint       = "Checkpoint"
	AttrCtime            = "ctime"
	AttrDepend           = "depend"
	AttrErrorPath        = "Error_Path"
	AttrExecHost         = "exec_host"
	AttrExecVnode        = "exec_vnode"
	AttrExecGPUs         = "exec_gpus" // the GPUs a job has on its node, Torque's "n1-gpu/0+n1-gpu/1" (OpenPBS has none)
	AttrExecutionTime    = "Execution_Time"
	AttrHoldTypes        = "Hold_Types"
	AttrJoinPath         = "Join_Path"
	AttrKeepFiles        = "Keep_Files"
	AttrMailPoints       = "Mail_Points"
	AttrMailUsers        = "Mail_Users"
	AttrMtime            = "mtime"
	AttrOutputPath       = "Output_Path"
	AttrPriority         = "Priority"
	AttrQtime            = "qtime"
	AttrRerunable        = "Rerunable"
	AttrResourceList     = "Resource_List"
	AttrStime            = "stime"
	AttrSessionID        = "session_id"
	AttrShellPathList    = "Shell_Path_List"
	AttrJobdir           = "jobdir"
	AttrSubstate         = "substate"
	AttrVariableList     = "Variable_List"
	AttrEuser            = "euser"
	AttrEgroup           = "egroup"
	AttrQueueRank        = "queue_rank"
	AttrQueueType        = "queue_type"
	AttrComment          = "comment"
	AttrEtime            = "etime"
	AttrRunCount         = "run_count"
	AttrExitStatus       = "Exit_status"
	AttrExitStatusTorque = "exit_status" // Torque spelling
	AttrSubmitArguments  = "Submit_arguments"
	AttrUserList         = "User_List"
	AttrGroupList        = "group_list"
	AttrProject          = "project"
	AttrSubmitHost       = "Submit_Host"
	AttrSandbox          = "sandbox"
	AttrObittime         = "obittime"
	AttrHistoryTime      = "history_timestamp"
	AttrStartTimeTorque  = "start_time" // Torque spelling of stime
	AttrCompTime         = "comp_time"  // Torque
	AttrHoldUntil        = "hold_until"
	// AttrEstimated holds a scheduler's estimate for a queued job:
	// estimated.start_time (Unix seconds) and estimated.exec_vnode.
	AttrEstimated    = "estimated"
	AttrInteractive  = "interactive"
	AttrInitWorkDir  = "init_work_dir" // Torque qsub -d / -w
	AttrArrayIndices = "array_indices_submitted"
	// Job arrays: a parent shows array = True, its indices still queued
	// and its subjobs' counts by state; a subjob its parent and index.
	AttrArray           = "array"
	AttrArrayRemaining  = "array_indices_remaining"
	AttrArrayStateCount = "array_state_count"
	AttrMaxRunSubjobs   = "max_run_subjobs"
	AttrArrayID         = "array_id"
	AttrArrayIndex      = "array_index"
	AttrStagein         = "stagein"
	AttrStageout        = "stageout"
	// AttrStageinNode is the node where an early stage-in (the
	// scheduler's stage-in request) put, or is putting, the job's
	// stage-in files; read only.
	AttrStageinNode  = "stagein_node"
	AttrInitRootDir  = "init_root_dir" // Torque qsub -D
	AttrJobArguments = "job_arguments" // Torque qsub -F
	AttrRemoveFiles  = "Remove_Files"  // OpenPBS qsub -R
	AttrJobType      = "jobtype"       // Torque qsub -T: prologue.<jobtype>, epilogue.<jobtype>
	AttrExtension    = "x"             // Torque qsub -W x=...
	AttrUmask        = "umask"
	AttrBlock        = "block" // OpenPBS qsub -W block=true
	// OpenPBS's node-failure options: only the values that describe what
	// this system does are accepted (model.passThrough).
	AttrTolerateNodeFailures   = "tolerate_node_failures"
	AttrReleaseNodesOnStageout = "release_nodes_on_stageout"
	// AttrEligibleTime is how long the job has accrued eligible time
	// (HH:MM:SS), and AttrAccrueType what it accrues now (0 initial, 1
	// ineligible, 2 eligible, 3 run, 4 exit): OpenPBS's, shown while the
	// server's eligible_time_enable is True.
	AttrEligibleTime = "eligible_time"
	AttrAccrueType   = "accrue_type"
)

// Queue attributes.
const (
	AttrQueueTypeQ      = "queue_type"
	AttrEnabled         = "enabled"
	AttrStarted         = "started"
	AttrMaxRunning      = "max_running"
	AttrMaxQueuable     = "max_queuable"
	AttrMaxUserQueuable = "max_user_queuable"
	AttrMaxUserRun      = "max_user_run"
	AttrMaxGroupRun     = "max_group_run"
	// Soft limits (server and queue): a job may run over them, but then
	// ranks at queue_softlimits / server_softlimits for preemption.
	AttrMaxUserRunSoft  = "max_user_run_soft"
	AttrMaxGroupRunSoft = "max_group_run_soft"
	// Per-user and per-group limits on what running jobs hold
	// (max_user_res.ncpus = 16; server and queue), and their soft forms.
	AttrMaxUserRes      = "max_user_res"
	AttrMaxGroupRes     = "max_group_res"
	AttrMaxUserResSoft  = "max_user_res_soft"
	AttrMaxGroupResSoft = "max_group_res_soft"
	// OpenPBS's entity limits (server and queue), values such as
	// "[u:PBS_GENERIC=10],[g:grp=5],[o:PBS_ALL=100]" (internal/entlim):
	// running jobs (max_run, its _res.RES form on what they hold, and
	// the soft forms), jobs in the queue or complex whatever their state
	// (max_queued) and queued ones only (queued_jobs_threshold).
	AttrMaxRun                 = "max_run"
	AttrMaxRunSoft             = "max_run_soft"
	AttrMaxRunRes              = "max_run_res"
	AttrMaxRunResSoft          = "max_run_res_soft"
	AttrMaxQueued              = "max_queued"
	AttrMaxQueuedRes           = "max_queued_res"
	AttrQueuedJobsThreshold    = "queued_jobs_threshold"
	AttrQueuedJobsThresholdRes = "queued_jobs_threshold_res"
	AttrResourcesMax           = "resources_max"
	AttrResourcesMin           = "resources_min"
	AttrResourcesDefault       = "resources_default"
	AttrResourcesAvail         = "resources_available"
	AttrResourcesAssigned      = "resources_assigned"
	AttrQPriority              = "Priority"
	AttrAclHostEnable          = "acl_host_enable"
	AttrAclHosts               = "acl_hosts"
	AttrAclUserEnable          = "acl_user_enable"
	AttrAclUsers               = "acl_users"
	AttrAclGroupEnable         = "acl_group_enable"
	AttrAclGroups              = "acl_groups"
	AttrRouteDestinations      = "route_destinations"
	AttrRouteHeldJobs          = "route_held_jobs"
	AttrRouteWaitingJobs       = "route_waiting_jobs"
	AttrRouteRetryTime         = "route_retry_time"
	AttrRouteLifetime          = "route_lifetime"
	AttrFromRouteOnly          = "from_route_only"
	AttrKillDelay              = "kill_delay"
	AttrResizeSignal           = "resize_signal" // qsub -W resize_signal=USR1: what an elastic job gets when it grows or shrinks
	AttrKeepCompleted          = "keep_completed"
	AttrTotalJobs              = "total_jobs"
	AttrStateCount             = "state_count"
	AttrHasNodes               = "hasnodes"
	// AttrActivationFilters lists the programs the scheduler runs before
	// starting a job of the queue, before sched_config's
	// activation_filter lines (comma-separated absolute paths, in order).
	AttrActivationFilters = "activation_filters"
)

// Scheduler attributes (qmgr's sched object) besides those it shares
// with the server (scheduling, scheduler_iteration, sched_cycle_length)
// and log_events and pbs_version, which are named as the server's.
const (
	AttrSchedHost = "sched_host"
	AttrSchedPort = "sched_port"
	AttrSchedPriv = "sched_priv"
	AttrSchedLog  = "sched_log"
	// AttrSchedState is idle, scheduling or down, as OpenPBS says.
	AttrSchedState = "state"
	// AttrOptBackfillFuzzy is OpenPBS's coarsening of backfill's start
	// time estimates (off, low, medium, high or seconds).
	AttrOptBackfillFuzzy = "opt_backfill_fuzzy"
)

// Server attributes.
const (
	AttrServerState = "server_state"
	AttrServerHost  = "server_host"
	// AttrServerMembers, AttrServerLeader and AttrServerTerm describe a
	// replicated server group (PBS_SERVER_PEERS): its members' batch
	// addresses, the leader's, and raft's current term.
	AttrServerMembers      = "server_members"
	AttrServerLeader       = "server_leader"
	AttrServerTerm         = "server_term"
	AttrScheduling         = "scheduling"
	AttrSchedulerIteration = "scheduler_iteration"
	// AttrBackfillDepth is OpenPBS's backfill_depth of the server and of
	// a queue: how many top jobs get a reserved start (0: none, no
	// backfilling); a queue's counts its own jobs, over the server's.
	AttrBackfillDepth    = "backfill_depth"
	AttrSchedCycleLength = "sched_cycle_length"
	AttrDefaultQueue     = "default_queue"
	// AttrDefaultQsubArguments is qsub options every submission gets,
	// below its directives and command line (qsubopt.ParseDefaults).
	AttrDefaultQsubArguments = "default_qsub_arguments"
	AttrManagers             = "managers"
	AttrOperators            = "operators"
	AttrQueryOtherJobs       = "query_other_jobs"
	AttrNodePack             = "node_pack"
	AttrDefaultNode          = "default_node"
	AttrAclHostEnableSvr     = "acl_host_enable"
	AttrAclRoots             = "acl_roots"
	AttrMailFrom             = "mail_from"
	AttrLogEvents            = "log_events"
	AttrPbsVersion           = "pbs_version"
	AttrNextJobNumber        = "next_job_number"
	AttrJobHistoryEnable     = "job_history_enable"
	AttrJobHistoryDuration   = "job_history_duration"
	AttrNodeFailRequeue      = "node_fail_requeue"
	AttrNodeCheckRate        = "node_check_rate"
	AttrDefaultChunk         = "default_chunk"
	AttrServerName           = "server_name"
	AttrFlatUID              = "flatuid"
	AttrEligibleTimeEnable   = "eligible_time_enable"
	AttrMaxArraySize         = "max_array_size"
	AttrResvEnable           = "resv_enable"
	AttrLicenseCount         = "license_count"
	AttrJobscriptMaxSize     = "jobscript_max_size"
	// AttrSubmissionFilters lists the programs pbs_server runs at qsub
	// (comma-separated absolute paths, in order); a queue's own list,
	// under the same name, runs before the server's.
	AttrSubmissionFilters = "submission_filters"
	// AttrSubmissionFilterTimeout is how long one submission filter may
	// run, in seconds (15 when unset).
	AttrSubmissionFilterTimeout = "submission_filter_timeout"
	// AttrStagefailWait is how long, in seconds, a job whose stage-in
	// failed waits (W) before the scheduler may try it again: the
	// classic PBS_STAGEFAIL_WAIT, 1800 when unset.
	AttrStagefailWait = "stagefail_wait"
)

// Node attributes.
const (
	AttrNodeMom        = "Mom"
	AttrNodePort       = "Port"
	AttrNodeState      = "state"
	AttrNodeNtype      = "ntype"
	AttrNodeJobs       = "jobs"
	AttrNodeNote       = "comment"
	AttrNodeNoteTorque = "note"
	AttrNodeLoadave    = "loadave"
	AttrNodeArch       = "arch"
	AttrNodeNp         = "np"
	AttrNodeProperties = "properties"
	AttrNodeStatus     = "status"
	AttrNodeVersion    = "pbs_version"
	AttrNodeSharing    = "sharing"
	AttrNodeLastState  = "last_state_change_time"
	AttrNodeLastUsed   = "last_used_time"
	AttrNodeResvEnable = "resv_enable"
	AttrNodeIdealLoad  = "ideal_load"
	AttrNodeMaxLoad    = "max_load"
	AttrNodePcpus      = "pcpus"
	// AttrNodeOfflineByCheck is set while the node is offline because its
	// mom's health check ($node_check_script) fails: the check's message,
	// which it also put in the comment. Only the server sets it; a
	// manager's change of the node's state clears it.
	AttrNodeOfflineByCheck = "offline_by_check"
)

// Reservation attributes (OpenPBS's, pbs_ifl.h). On the wire
// reserve_state is OpenPBS's number (ResvState); reserve_start,
// reserve_end, ctime and mtime are Unix seconds; pbs_rstat renders them.
const (
	AttrResvName     = "Reserve_Name"
	AttrResvOwner    = "Reserve_Owner"
	AttrResvType     = "reserve_type"
	AttrResvState    = "reserve_state"
	AttrResvSubstate = "reserve_substate"
	AttrResvStart    = "reserve_start"
	AttrResvEnd      = "reserve_end"
	AttrResvDuration = "reserve_duration"
	AttrResvNodes    = "resv_nodes"
	AttrAuthUsers    = "Authorized_Users"
	AttrAuthGroups   = "Authorized_Groups"
	AttrAuthHosts    = "Authorized_Hosts"
	AttrResvStanding = "reserve_standing"
	AttrResvCount    = "reserve_count"
	AttrResvIndex    = "reserve_index"
	AttrResvRrule    = "reserve_rrule"
	AttrResvTimezone = "reserve_timezone"
	// AttrResvOccurrences is gopbs's: each remaining occurrence of a
	// reservation, "start=nodes" separated by blanks (the nodes empty
	// until confirmed), for the scheduler and managers; pbs_rstat -f
	// leaves it out, as OpenPBS's leaves out reserve_execvnodes.
	AttrResvOccurrences = "reserve_occurrences"
	// AttrNodeResvs lists the reservations a node is given to (pbsnodes
	// shows it; read only).
	AttrNodeResvs = "resv"
	// AttrAclResvUserEnable and AttrAclResvUsers are the server's list
	// of who may make reservations (OpenPBS's; managers always may).
	AttrAclResvUserEnable = "acl_resv_user_enable"
	AttrAclResvUsers      = "acl_resv_users"
	// AttrReserveRetryTime is the server's reserve_retry_time: seconds
	// between attempts to move a DEGRADED reservation to nodes that are
	// up (OpenPBS's; default 600). AttrReserveRetryInit is OpenPBS's
	// deprecated name of it, taken for it.
	AttrReserveRetryTime = "reserve_retry_time"
	AttrReserveRetryInit = "reserve_retry_init"
	// AttrResvRetry is a DEGRADED reservation's reserve_retry: when the
	// scheduler next tries to move it (Unix seconds; pbs_rstat renders
	// it).
	AttrResvRetry = "reserve_retry"
)

// Resource names the server itself interprets.
const (
	ResNcpus    = "ncpus"
	ResMem      = "mem"
	ResVmem     = "vmem"
	ResWalltime = "walltime"
	// ResMinWalltime and ResMaxWalltime make a shrink-to-fit job: the
	// scheduler chooses its walltime between them when it starts it.
	ResMinWalltime  = "min_walltime"
	ResMaxWalltime  = "max_walltime"
	ResSoftWalltime = "soft_walltime"
	ResCput         = "cput"
	ResSelect       = "select"
	ResPlace        = "place"
	ResNodes        = "nodes"
	ResNodect       = "nodect"
	ResArch         = "arch"
	ResHost         = "host"
	ResMpiprocs     = "mpiprocs"
	ResNgpus        = "ngpus"
)
