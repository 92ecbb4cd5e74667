package proto

// Mom traffic. A mom keeps one authenticated connection to the server
// (RoleMom, Hello.Name = its node name) for status reports and job exit
// notices; the server opens its own authenticated connections to the mom's
// PBS_MOM_SERVICE_PORT (RoleServer) to start, signal and kill jobs.

// Message types of mom traffic (append-only).
const (
	MsgMomStatus    MsgType = 40 // mom -> server: MomStatus, reply MomStatusReply
	MsgJobObit      MsgType = 41 // mom -> server: JobObit, reply empty
	MsgMomRunJob    MsgType = 50 // server -> mom: MomJob, reply empty
	MsgMomSignalJob MsgType = 51 // server -> mom: MomSignal, reply empty
	MsgMomRunJobs   MsgType = 52 // server -> mom: MomJobs, reply MomJobsReply
	MsgMomShutdown  MsgType = 53 // server -> mom: no body, reply empty; the mom then stops (qterm -m)
)

func init() {
	msgNames[MsgMomStatus] = "MomStatus"
	msgNames[MsgJobObit] = "JobObit"
	msgNames[MsgMomRunJob] = "MomRunJob"
	msgNames[MsgMomSignalJob] = "MomSignalJob"
	msgNames[MsgMomRunJobs] = "MomRunJobs"
	msgNames[MsgMomShutdown] = "MomShutdown"
}

// MomStatus is a mom's periodic report.
type MomStatus struct {
	Node    string
	Version string
	Port    int    // the mom's service port, so the server can reach it
	Arch    string // "linux"
	Ncpus   int
	Physmem int64   // bytes
	Loadave float64 // one-minute load average
	// IdealLoad and MaxLoad come from $ideal_load / $max_load in
	// mom_priv/config; negative when not configured.
	IdealLoad float64
	MaxLoad   float64
	// Static resources from mom_priv/config ("name value" lines).
	Resources map[string]string
	// Jobs the mom knows: running ones and exited ones whose obit is not
	// yet acknowledged.
	Jobs []MomJobState
	// Vnodes are further nodes this mom reports for (a host split into
	// several nodes, or a simulator): each must exist on the server with
	// the same Mom host and Port as the reporting node.
	Vnodes []VnodeStatus
}

// VnodeStatus is what a mom reports for one of its further nodes.
type VnodeStatus struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Name      string
	Ncpus     int
	Physmem   int64
	Resources map[string]string
}

// MomJobState is one job as its mom sees it.
type MomJobState struct {
	_msgpack  struct{} `msgpack:",as_array"`
	JobID     string
	RunCount  int
	SessionID int
	Exited    bool
	Suspended bool
	Used      Usage
}

// Usage is what a job consumed so far.
type Usage struct {
	_msgpack   struct{} `msgpack:",as_array"`
	CPUSecs    int64    // cput
	MemBytes   int64    // peak resident memory
	VmemBytes  int64
	WallSecs   int64
	CPUPercent int64
}

// MomStatusReply answers a status report.
type MomStatusReply struct {
	// Interval is how often the server wants reports, in seconds.
	Interval int
	// Kill lists jobs the mom reported that must not run there (the server
	// requeued or finished them): the mom kills them and drops them.
	Kill []string
	// Lease is how long, in seconds from when the mom sent the report,
	// its jobs may keep running without another answered report; its
	// shepherds kill them when it lapses. 0: no lease (jobs are never
	// requeued elsewhere, so they need no fencing).
	Lease int
}

// JobObit tells the server a job ended. The server answers only after the
// end is durable; the mom retries until then, and the server ignores a
// repeat (same job and run count already finished).
type JobObit struct {
	JobID      string
	RunCount   int
	ExitStatus int
	Used       Usage
	Start      int64 // Unix seconds the script started
	End        int64
	Comment    string // why it ended, when not by itself ("walltime exceeded")
	SessionID  int
	// Fenced is set when the shepherd killed the job because the mom's
	// lease lapsed: the server requeues it as after a node failure.
	Fenced bool
}

// MomJob is everything a mom needs to run a job (server -> mother
// superior).
type MomJob struct {
	JobID        string
	RunCount     int
	Name         string
	Owner        string // user@host
	EUser        string
	EGroup       string
	Queue        string
	Script       []byte
	VariableList string
	OutputPath   string // host:/path
	ErrorPath    string
	JoinPath     string // oe, eo or n
	KeepFiles    string
	ShellPath    string // Shell_Path_List
	WorkDir      string // init_work_dir, "" for the owner's home
	ExecHost     string
	ExecVnode    string
	// NodeFile lists the hosts for PBS_NODEFILE, one entry per MPI process.
	NodeFile   []string
	Ncpus      int // of the first chunk: PBS_NCPUS, NCPUS
	OMPThreads int
	Walltime   int64 // seconds; 0 for no limit
	KillDelay  int64 // seconds between SIGTERM and SIGKILL
	// Resources is the job's Resource_List, name=value.
	Resources map[string]string
	// AllowRoot is set when the server's acl_roots lets this job run as root.
	AllowRoot bool
}

// MomSignal asks the mom to signal a job: a signal name or number,
// "suspend", "resume", or "delete" (SIGTERM, then SIGKILL after KillDelay).
type MomSignal struct {
	JobID     string
	Signal    string
	KillDelay int64
}

// MomJobs starts several jobs on one mom (its own node and its vnodes) in
// one request.
type MomJobs struct {
	Jobs []MomJob
}

// MomJobsReply has one result per job, in order (Code 0: started).
type MomJobsReply struct {
	Results []ObjectError
}
