package proto

// Scheduler traffic. To start a cycle the server dials the scheduler's
// PBS_SCHEDULER_SERVICE_PORT (Hello role RoleServer, cluster key) and sends
// one SchedCommand. For the rest of the cycle the scheduler is a
// manager-privileged client on that same connection: it sends requests
// (status, RunJobs, AlterJob for comments, HoldJob, DeleteJob) and the
// server answers them. The scheduler ends the cycle by closing the
// connection.

// Message types of scheduler traffic (append-only).
const (
	MsgSchedCommand MsgType = 60 // server -> scheduler: SchedCommand, no reply
	MsgRunJobs      MsgType = 61 // scheduler -> server: RunJobsRequest, reply RunJobsReply
	MsgAlterJobs    MsgType = 62 // AlterJobsRequest, reply AlterJobsReply (one commit)
)

func init() {
	msgNames[MsgSchedCommand] = "SchedCommand"
	msgNames[MsgRunJobs] = "RunJobs"
	msgNames[MsgAlterJobs] = "AlterJobs"
}

// SchedCmd says why a cycle starts. The numbers are the classic ones
// (SCH_SCHEDULE_* of Torque and OpenPBS 2.3).
type SchedCmd int32

// Scheduler commands.
const (
	SchedNull      SchedCmd = 0
	SchedNew       SchedCmd = 1  // a job became eligible in an execution queue
	SchedTerm      SchedCmd = 2  // a running job ended
	SchedTime      SchedCmd = 3  // scheduler_iteration seconds passed
	SchedRecyc     SchedCmd = 4  // the last cycle started exactly one job
	SchedCmdSet    SchedCmd = 5  // scheduling was set to True
	SchedConfigure SchedCmd = 7  // re-read the configuration
	SchedQuit      SchedCmd = 8  // exit
	SchedFirst     SchedCmd = 10 // first cycle after the server started
)

var schedCmdNames = map[SchedCmd]string{
	SchedNull: "null", SchedNew: "new", SchedTerm: "term", SchedTime: "time", SchedRecyc: "recyc",
	SchedCmdSet: "cmd", SchedConfigure: "configure", SchedQuit: "quit", SchedFirst: "scheduler_first",
}

// String is the command's name as schedulers log it.
func (c SchedCmd) String() string {
	if n, ok := schedCmdNames[c]; ok {
		return n
	}
	return "unknown"
}

// SchedCommand starts a cycle.
type SchedCommand struct {
	Cmd SchedCmd
}

// RunJobsRequest starts several jobs in one request; each is checked
// against live state and started or refused on its own.
type RunJobsRequest struct {
	Runs []RunSpec
}

// RunSpec is one job to start: its id and where. A scheduler gives Where,
// the node of each chunk of the job's select in order (its exact
// placement, which the server checks against live state as it is: there
// is nothing to parse); qrun gives Nodes as typed ("n1+n2", or one node
// for all chunks; "" lets the server choose).
type RunSpec struct {
	_msgpack struct{} `msgpack:",as_array"`
	JobID    string
	Nodes    string
	// Comment replaces the job's comment when it starts ("Job started on
	// ..."), in the same commit.
	Comment string
	Where   []string
	// Counted are the resources the scheduler counted and matched in
	// placing the job (sched_config's resources: line; empty: all): the
	// server checks the placement against live state with those alone,
	// as the scheduler did, and assigns the job everything it asked for.
	Counted []string
	// Walltime, in seconds, is the walltime a scheduler chose for a
	// shrink-to-fit job (one with min_walltime and no walltime): the
	// server checks it lies between the job's min_walltime and
	// max_walltime and sets it as the job's Resource_List.walltime in the
	// commit that starts it. 0 for every other start.
	Walltime int64
}

// RunJobsReply has one entry per RunSpec, in order: Code 0 for started.
type RunJobsReply struct {
	Results []ObjectError
}

// AlterJobsRequest applies several qalter-like changes in one commit (a
// scheduler setting the comments of many jobs).
type AlterJobsRequest struct {
	Alters []AlterRequest
}

// AlterJobsReply has one entry per AlterRequest, in order.
type AlterJobsReply struct {
	Results []ObjectError
}
