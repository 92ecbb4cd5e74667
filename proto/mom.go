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
	// MsgStageInDone tells the server how an early stage-in ended.
	MsgStageInDone MsgType = 42 // mom -> server: StageInDone, reply empty
	// MsgMomStageIn asks a mom to copy a queued job's stage-in files
	// without running it (the server's pbs_stagein); the mom answers at
	// once and reports the outcome with MsgStageInDone.
	MsgMomStageIn MsgType = 54 // server -> mom: MomJob (no script), reply empty
	// Mom-to-mom file transfer for staging (RoleMom on the mom port, the
	// cluster key). A get is answered by FileChunk frames, More set on all
	// but the last. A put is answered once when the file is open; the
	// requester then sends FileChunk frames of type MsgMomFileData with
	// the request's Seq, More set on all but the last, and the serving mom
	// answers once more when the file is in place.
	MsgMomFileGet  MsgType = 55 // mom -> mom: FileRequest, reply FileChunk frames
	MsgMomFilePut  MsgType = 56 // mom -> mom: FileRequest, reply empty, then data
	MsgMomFileData MsgType = 57 // mom -> mom: FileChunk, one frame of a put
)

func init() {
	msgNames[MsgMomStatus] = "MomStatus"
	msgNames[MsgJobObit] = "JobObit"
	msgNames[MsgMomRunJob] = "MomRunJob"
	msgNames[MsgMomSignalJob] = "MomSignalJob"
	msgNames[MsgMomRunJobs] = "MomRunJobs"
	msgNames[MsgMomShutdown] = "MomShutdown"
	msgNames[MsgStageInDone] = "StageInDone"
	msgNames[MsgMomStageIn] = "MomStageIn"
	msgNames[MsgMomFileGet] = "MomFileGet"
	msgNames[MsgMomFilePut] = "MomFilePut"
	msgNames[MsgMomFileData] = "MomFileData"
}

// MomStatus is a mom's periodic report.
type MomStatus struct {
	// HooksVersion is the version of the site hooks this mom holds (see
	// MomStatusReply).
	HooksVersion uint64
	Node         string
	Version      string
	Port         int    // the mom's service port, so the server can reach it
	Arch         string // "linux"
	Ncpus        int
	Physmem      int64   // bytes
	Loadave      float64 // one-minute load average
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
	// RemoteCopy is set when mom_priv/config lets this mom copy staged
	// files with scp from hosts that run no pbs_mom ($rcpcmd).
	RemoteCopy bool
	// UseCpHosts are the host patterns of this mom's $usecp lines: files
	// of those hosts it reaches as local files (a name, "*.domain", "*").
	UseCpHosts []string
	// Staging lists the queued jobs whose early stage-in this mom is
	// copying, or has finished and not yet reported.
	Staging []string
	// HostNames are the names of the mom's own host (its host name and
	// the canonical name that resolves to), and HostAddrs its addresses:
	// a staging list names the host as users write it, which need not be
	// the name the node was registered under (localhost, a short name).
	HostNames []string
	HostAddrs []string
	// Health is the verdict of the mom's node health check
	// ($node_check_script): "" when it passes or none runs, else why the
	// node should take no jobs (the check's ERROR line). The server takes
	// the node offline with it as the comment, and back online once it is
	// "" again when the check was what took it offline.
	Health string
	// Sisters are the jobs this mom holds for another node's mom (their
	// tasks here, their usage here); the server answers with Kill for
	// one that no longer runs.
	Sisters []MomJobState
	// NodeAttrs are the reporting node's own attributes its vnode
	// definitions set (mom_priv/config.d): sharing, resv_enable.
	NodeAttrs map[string]string
}

// VnodeStatus is what a mom reports for one of its further nodes.
type VnodeStatus struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Name      string
	Ncpus     int
	Physmem   int64
	Resources map[string]string
	// Attrs are the vnode's attributes other than resources (sharing,
	// resv_enable), as its definition sets them.
	Attrs map[string]string
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
	// Phase is what the job's shepherd is doing: PhaseRunning, or copying
	// stage-in or stage-out files.
	Phase JobPhase
	// GPUs are the GPUs the job has on the node, as its exec_gpus shows
	// them ("" for none).
	GPUs string
	// ExecVnode is the allocation the first mom runs the job with (an
	// elastic job's changes; the server brings a mom that differs to
	// what its store says).
	ExecVnode string
}

// JobPhase is the part of a job's life its shepherd is in.
type JobPhase uint8

// Job phases.
const (
	PhaseRunning  JobPhase = 0
	PhaseStageIn  JobPhase = 1 // copying stage-in files before the script
	PhaseStageOut JobPhase = 2 // copying stage-out files after the script
)

// Usage is what a job consumed so far.
type Usage struct {
	_msgpack   struct{} `msgpack:",as_array"`
	CPUSecs    int64    // cput
	MemBytes   int64    // peak resident memory
	VmemBytes  int64
	WallSecs   int64
	CPUPercent int64
}

// NodeUsage is what a job used on one of its nodes.
type NodeUsage struct {
	_msgpack struct{} `msgpack:",as_array"`
	Node     string
	Used     Usage
}

// SumUsage is the usage of every node, summed as Plus does.
func SumUsage(nodes []NodeUsage) Usage {
	var sum Usage
	for _, n := range nodes {
		sum = sum.Plus(n.Used)
	}
	return sum
}

// Plus is u with what a job used on one more node added (OpenPBS sums
// cpu time and memory over the nodes; wall time is the job's own).
func (u Usage) Plus(v Usage) Usage {
	u.CPUSecs += v.CPUSecs
	u.MemBytes += v.MemBytes
	u.VmemBytes += v.VmemBytes
	return u
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
	// HooksVersion is the version of the site hooks of the execution
	// hosts' events (0: none). When it differs from the mom's, Hooks are
	// all of them and HooksSent is set; the mom replaces its own.
	HooksVersion uint64
	HooksSent    bool
	Hooks        []MomHook
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
	// StageInFailed is set when a stage-in file could not be copied: the
	// script never started, Comment says which file and why, and the
	// server makes the job wait (stagefail_wait) rather than end it.
	StageInFailed bool
	// StageOutSpool is where the files whose stage-out failed were kept
	// ("" when every stage-out copy worked); Comment says which and why.
	StageOutSpool string
	// ByNode is Used node by node, the mother superior's first, for a
	// job that ran on sisters too (nil otherwise, and from older moms).
	ByNode []NodeUsage
}

// StageFile is one file of a job's stage-in or stage-out list as the
// server resolved it for the mom that copies it.
type StageFile struct {
	_msgpack struct{} `msgpack:",as_array"`
	Local    string   // on the execution host; relative to the job's working directory
	Host     string   // as the user wrote it
	Remote   string   // the path on Host
	// Here is set when Host is the execution host itself: a local copy.
	Here bool
	// Node and Addr name the mom that serves Remote (mom-to-mom copy);
	// both empty when Host runs no pbs_mom (scp, when the mom allows it).
	Node  string
	Addr  string
	Token []byte // the server's grant, checked by that mom (see StageToken)
}

// StageInDone is the outcome of an early stage-in.
type StageInDone struct {
	JobID   string
	OK      bool
	Comment string // which file failed and why
}

// FileRequest asks another mom to read or write one file of a job's
// staging list, as the job's owner.
type FileRequest struct {
	JobID string
	User  string // the job's owner (euser)
	Group string
	Path  string
	Token []byte // StageToken of JobID, User, the direction and Path
}

// FileChunk carries a part of a file.
type FileChunk struct {
	Data []byte
	Mode uint32 // the file's permission bits, in the first chunk
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
	// StageIn and StageOut are the job's staging lists, resolved by the
	// server; StagedIn is set when an early stage-in already put the
	// stage-in files in place on this node, so the copy is skipped.
	StageIn  []StageFile
	StageOut []StageFile
	StagedIn bool
	// ArrayID is the array of a subjob ("12[].srv"; "" for a job that is
	// not one) and ArrayIndex its index: PBS_ARRAY_ID, PBS_ARRAY_INDEX
	// and Torque's PBS_ARRAYID.
	ArrayID    string
	ArrayIndex int
	// Umask is the job's umask when HasUmask is set (-W umask): for its
	// processes and for the files the mom creates for it.
	HasUmask bool
	Umask    uint32
	// Args are passed to the script after its path (Torque's qsub -F).
	Args []string
	// RemoveOutput and RemoveError remove the job's output or error file
	// when it exits 0 (OpenPBS's qsub -R).
	RemoveOutput bool
	RemoveError  bool
	// Account is Account_Name, for the epilogue's arguments.
	Account string
	// JobType is Torque's jobtype (qsub -T name): the mom runs
	// mom_priv/prologue.<name> and epilogue.<name> instead of the
	// prologue and epilogue, where those exist.
	JobType string
	// KeepOutput and KeepError name the file in the owner's home
	// directory on the execution host that keeps the stream instead of
	// OutputPath or ErrorPath (OpenPBS's Keep_Files o and e): "" when the
	// stream goes to its path.
	KeepOutput string
	KeepError  string
	// Interactive is set for an interactive job (qsub -I): its shepherd
	// runs the owner's shell on a terminal relayed to qsub instead of the
	// script.
	Interactive *InteractiveSession
	// Moms are the job's nodes with a mom of their own, the first node's
	// first: the mother superior asks the others to join the job (nil
	// for a job on one mom).
	Moms []NodeMom
	// TaskCookie is the job's secret for starting tasks (PBS_JOBCOOKIE in
	// its environment): made by the mother superior at the start, passed
	// to the sisters, never to the server.
	TaskCookie string
	// ResizeSignal is the signal the job gets when its allocation grows
	// or shrinks (-W resize_signal; "" for none).
	ResizeSignal string
	// Alloc is the allocation ExecVnode renders, typed, chunk by chunk:
	// what the moms read (their share of the job: cpus, memory, GPUs).
	// ExecVnode stays for the job's environment and files; a request of
	// a server before Alloc has only it, which the mom then reads.
	Alloc []MomChunk
}

// MomChunk is one chunk of a job's allocation: its node (a mom's own or
// one of its vnodes) and the amounts of the consumable resources it takes
// there (ncpus always).
type MomChunk struct {
	Node    string
	Amounts map[string]float64
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
