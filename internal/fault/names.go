package fault

// The fault points. Names are "<daemon or part>.<place>".
const (
	// StoreBeforeCommit is just before a group of mutations is written:
	// nothing of the group is durable or acknowledged.
	StoreBeforeCommit = "store.before_commit"
	// StoreAfterCommit is just after the group is durable, before any
	// caller is answered.
	StoreAfterCommit = "store.after_commit"
	// ServerBeforeReply is before pbs_server sends the reply to a request
	// (a command's or a daemon's) that it has carried out.
	ServerBeforeReply = "server.before_reply"
	// ServerDispatchMom is after the server committed a job's start and
	// before it sends the job to its mom.
	ServerDispatchMom = "server.dispatch_mom"
	// ServerObit is after the server committed a job's end, before it
	// acknowledges the mom's notice.
	ServerObit = "server.obit"
	// SchedMidCycle is in a scheduling cycle after its first start
	// request was answered, before the rest of its decisions are sent.
	SchedMidCycle = "sched.mid_cycle"
	// MomAfterStart is after a mom started a job's shepherd, before it
	// answers the server's run request.
	MomAfterStart = "mom.after_start"
	// MomBeforeObit is before a mom sends a job's end to the server.
	MomBeforeObit = "mom.before_obit"
	// MomStageReceive is in a mom that receives a file another mom
	// stages out to it, once the file's partial copy exists, before the
	// first chunk arrives.
	MomStageReceive = "mom.stage_receive"
	// ServerResizeMom is after the server committed a running job's
	// growth, before it tells the job's first mom.
	ServerResizeMom = "server.resize_mom"
	// MomJoinJob is in a sister mom asked to join a job, before it takes
	// anything for it: the join is refused.
	MomJoinJob = "mom.join_job"
	// ShepherdStarted is in a job's shepherd once the job's process
	// exists, before the shepherd records it.
	ShepherdStarted = "shepherd.started"
)

// Points lists every point, for tests and for checking GOPBS_FAULTS.
var Points = []string{
	StoreBeforeCommit, StoreAfterCommit, ServerBeforeReply, ServerDispatchMom, ServerObit,
	SchedMidCycle, ServerResizeMom, MomAfterStart, MomBeforeObit, MomStageReceive, MomJoinJob, ShepherdStarted,
}

// EnvVar holds the faults to arm in a fault build.
const EnvVar = "GOPBS_FAULTS"

// ClockEnvVar names, in a fault build, a file holding how far the
// daemon's clock (Now) runs ahead of the host's, as a Go duration ("45s");
// a test advances the clocks of pbs_server and pbs_sched together by
// rewriting it (testcluster's AdvanceClock), and they read it within 50 ms.
const ClockEnvVar = "GOPBS_FAULT_CLOCK"
