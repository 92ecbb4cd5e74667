package proto

import (
	"strconv"
	"strings"
)

// ProtocolVersion is the wire version this build speaks. The Hello exchange
// rejects a peer with another version with PBSE_PROTOCOL and a message naming
// both versions.
const ProtocolVersion = 2

// MsgType identifies the body of an Envelope. Codes are append-only: a code
// once released is never renumbered or reused.
type MsgType uint16

// Message types. Requests from commands are 10-39, mom traffic 40-59,
// scheduler traffic 60-79.
const (
	MsgHello      MsgType = 1
	MsgHelloReply MsgType = 2
	MsgReply      MsgType = 3

	MsgSubmit       MsgType = 10
	MsgStatusJob    MsgType = 11
	MsgStatusQueue  MsgType = 12
	MsgStatusServer MsgType = 13
	MsgStatusNode   MsgType = 14
	MsgDeleteJob    MsgType = 15
	MsgHoldJob      MsgType = 16
	MsgReleaseJob   MsgType = 17
	MsgAlterJob     MsgType = 18
	MsgSelectJobs   MsgType = 19
	MsgManager      MsgType = 20
	MsgRunJob       MsgType = 21
	MsgSignalJob    MsgType = 22
	MsgShutdown     MsgType = 23
	MsgWhoAmI       MsgType = 24
	MsgRerunJob     MsgType = 25
	// MsgStageInJob asks the server to have a queued job's stage-in files
	// copied to a node without running it (OpenPBS's pbs_stagein): a
	// JobRequest whose Extra is the node. Operators and managers (the
	// scheduler) only.
	MsgStageInJob MsgType = 26
	// MsgMoveJob moves a job that is not running to another queue
	// (qmove): a JobRequest whose Extra is "queue[@server]".
	MsgMoveJob MsgType = 27
	// MsgSubscribe opens the event stream of job changes on the
	// connection (a SubscribeRequest, events.go); the connection then
	// carries only the stream.
	MsgSubscribe MsgType = 28
	// MsgEvent is one frame of the event stream: an EventFrame.
	MsgEvent MsgType = 29
	// MsgStatusSched asks for the scheduler object (qmgr list sched): a
	// StatusRequest whose IDs name it ("default", the only one).
	MsgStatusSched MsgType = 38
)

var msgNames = map[MsgType]string{
	MsgHello: "Hello", MsgHelloReply: "HelloReply", MsgReply: "Reply",
	MsgSubmit: "Submit", MsgStatusJob: "StatusJob", MsgStatusQueue: "StatusQueue",
	MsgStatusServer: "StatusServer", MsgStatusNode: "StatusNode",
	MsgDeleteJob: "DeleteJob", MsgHoldJob: "HoldJob", MsgReleaseJob: "ReleaseJob",
	MsgAlterJob: "AlterJob", MsgSelectJobs: "SelectJobs", MsgManager: "Manager",
	MsgRunJob: "RunJob", MsgSignalJob: "SignalJob", MsgShutdown: "Shutdown",
	MsgWhoAmI: "WhoAmI", MsgRerunJob: "RerunJob", MsgStageInJob: "StageInJob", MsgMoveJob: "MoveJob",
	MsgSubscribe: "Subscribe", MsgEvent: "Event", MsgStatusSched: "StatusSched",
}

// Known reports whether t is a message type of this build (one with a
// name), so that monitoring can lump the others together.
func (t MsgType) Known() bool {
	_, ok := msgNames[t]
	return ok
}

func (t MsgType) String() string {
	if n, ok := msgNames[t]; ok {
		return n
	}
	return "MsgType(" + strconv.Itoa(int(t)) + ")"
}

// Role is what a connecting peer claims to be in its Hello. Only RoleClient
// is accepted without the cluster key (RoleLogin proves a key derived from
// it: LoginKey).
type Role uint8

// Roles.
const (
	RoleClient Role = 0
	RoleMom    Role = 1
	RoleSched  Role = 2
	RoleServer Role = 3
	// RoleLogin is a login host's agent (pbs_login): it may only vouch
	// for its host's users (Header.As), never act as a daemon.
	RoleLogin Role = 4
)

func (r Role) String() string {
	switch r {
	case RoleClient:
		return "client"
	case RoleMom:
		return "mom"
	case RoleSched:
		return "sched"
	case RoleServer:
		return "server"
	case RoleLogin:
		return "login"
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// Header is the envelope of every frame except the body: the message type, a
// sequence number that a reply echoes, the PBSE result of a reply, and More,
// set on all but the last frame of a multi-frame reply.
type Header struct {
	Type MsgType
	Seq  uint64
	Code Code
	Text string
	More bool
	// As is the identity a mom vouches for when it forwards a command from
	// its host. The server honours it only on an authenticated mom
	// connection.
	As *Identity
}

// Identity names a caller as the kernel or a vouching mom saw it.
type Identity struct {
	_msgpack struct{} `msgpack:",as_array"`
	User     string
	UID      uint32
	GID      uint32
	Groups   []string
	Host     string
}

// Hello opens every connection.
type Hello struct {
	Version uint32
	Role    Role
	Name    string // node name for a mom, scheduler name for a scheduler
	Nonce   []byte // client nonce, 16 bytes, used by authenticated roles
}

// HelloReply answers a Hello.
type HelloReply struct {
	Version    uint32
	ServerName string // the short server name used in job ids
	Nonce      []byte // server nonce for authenticated roles
}

// Op is the operator of an attribute in a request: how qmgr and qalter
// change it, or how qselect compares it.
type Op uint8

// Operators.
const (
	OpSet   Op = 0
	OpUnset Op = 1
	OpIncr  Op = 2 // +=
	OpDecr  Op = 3 // -=
	OpEQ    Op = 4
	OpNE    Op = 5
	OpGE    Op = 6
	OpGT    Op = 7
	OpLE    Op = 8
	OpLT    Op = 9
)

// Attr is one attribute, or one resource of a resource-list attribute
// (Name "Resource_List", Resource "ncpus"), as PBS's attropl.
type Attr struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Resource string
	Value    string
	Op       Op
}

// FullName is name or name.resource.
func (a Attr) FullName() string {
	if a.Resource == "" {
		return a.Name
	}
	return a.Name + "." + a.Resource
}

// SplitAttrName splits "Resource_List.ncpus" into its name and resource.
func SplitAttrName(full string) (name, resource string) {
	if i := strings.IndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return full, ""
}

// Status is one object of a status reply: a job id, queue, node or server
// name and its attributes in display order. Alloc is a started job's
// allocation, typed, when the request asked for it (StatusRequest.Alloc):
// what its exec_vnode and exec_host attributes say, for a scheduler to
// read without parsing them. It is written only when there is one, so a
// status without it is the two fields an older peer reads.
type Status struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Attrs    []Attr
	Alloc    []Held
}

// Held is one chunk of a started job's allocation (resc.Alloc on the
// wire): the vnode it is on, the node whose mom runs it, the cpus
// exec_host counts for it, and what it takes there, in exec_vnode's order
// with canonical values.
type Held struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Vnode     string
	Host      string
	Ncpus     int64
	Resources []ResourceValue
}

// ResourceValue is one resource and its value.
type ResourceValue struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Value    string
}

// Get returns the value of the attribute full name ("job_state",
// "Resource_List.ncpus") and whether it is present.
func (s *Status) Get(full string) (string, bool) {
	name, res := SplitAttrName(full)
	for _, a := range s.Attrs {
		if a.Name == name && a.Resource == res {
			return a.Value, true
		}
	}
	return "", false
}

// SubmitRequest queues a new job. Attrs are what qsub set; the server
// derives owner, times, paths and defaults itself and never trusts the
// client for identity.
type SubmitRequest struct {
	Queue  string // destination as given to -q, "" for the default queue
	Attrs  []Attr
	Script []byte
	// Interactive is set by qsub -I: the job's shell is relayed to qsub
	// (Host is left to the server).
	Interactive *InteractiveSession
}

// InteractiveCookieLen is the length of an interactive job's secret.
const InteractiveCookieLen = 32

// MinInteractivePort is the lowest port an interactive session may name.
// The job's shepherd dials it as root from the execution host, so a
// submitter who could name any port could probe the services of the
// submission host (what refused, what spoke first); qsub listens as its
// user on a port the kernel picks, never a privileged one. The server
// refuses a lower port at submission and the shepherd refuses to dial
// one.
const MinInteractivePort = 1024

// InteractiveSession says where an interactive job's shepherd finds its
// qsub: Port on Host (the submission host, as the server knows it), and
// the secret (Cookie, InteractiveCookieLen random bytes qsub made) by
// which each proves itself to the other (internal/interactive). The
// server shows none of it (the job's interactive attribute shows True)
// and gives it only to the job's mom.
type InteractiveSession struct {
	_msgpack struct{} `msgpack:",as_array"`
	Host     string
	Port     int
	Cookie   []byte
}

// SubmitReply carries the new job's id.
type SubmitReply struct {
	JobID string
}

// StatusRequest asks for jobs, queues, nodes or the server. IDs empty means
// all objects. For jobs, IDs may name queues ("workq", "@server") as qstat
// destinations do. Attrs limits the attributes returned (empty: all).
type StatusRequest struct {
	IDs     []string
	Attrs   []string
	History bool // include finished jobs (qstat -x)
	// Subjobs lists every subjob of each array after it (qstat -t);
	// LiveSubjobs only those that are jobs of their own: queued alone,
	// running or exiting (schedulers make the others from the parent).
	Subjobs     bool
	LiveSubjobs bool
	// Since and Epoch ask for jobs changed since an earlier answer (all
	// jobs, no IDs): when Epoch is the server's, only jobs whose version is
	// above Since are sent, and Live lists every job that would have been.
	Since uint64
	Epoch string
	// Alloc asks for each started job's allocation typed (Status.Alloc)
	// beside its attributes: a scheduler's fetch. A server that does not
	// know it sends the attributes alone.
	Alloc bool
}

// StatusReply is one frame of a status answer; Header.More says more follow.
// Errors names the operands that failed, each with its own code.
type StatusReply struct {
	Objects []Status
	Errors  []ObjectError
	// For job status: the server's change counter and epoch (a new one at
	// every start), and, for an incremental answer, every selected job in
	// order, changed or not. Set on the last frame.
	Version uint64
	Epoch   string
	Live    []string
}

// ObjectError is the failure of one operand of a multi-operand request.
type ObjectError struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Code     Code
	Text     string
}

// ObjectErrorOf is the refusal err of object name, with err's code.
func ObjectErrorOf(name string, err error) ObjectError {
	return ObjectError{Name: name, Code: CodeOf(err), Text: err.Error()}
}

// JobRequest is the body of DeleteJob, HoldJob, ReleaseJob, RunJob and
// SignalJob. Extra holds the request's argument: hold types for hold and
// release, the node list for run, the signal for signal, and for delete
// "force" or "" .
type JobRequest struct {
	JobID string
	Extra string
}

// AlterRequest changes job attributes (qalter).
type AlterRequest struct {
	JobID string
	Attrs []Attr
}

// SelectRequest selects job ids by criteria (qselect). Criteria use the Op
// comparison operators; Name "job_state" compares state letters.
type SelectRequest struct {
	Criteria []Attr
	History  bool
	// Subjobs selects among jobs and every array's subjobs instead of the
	// arrays themselves (OpenPBS's qselect -T).
	Subjobs bool
}

// DeleteOptions are qdel's, sent as a delete request's Extra: Force ends
// the job without waiting for its execution host (-W force, Torque's -p);
// Purge removes its history too (-x); KillDelay, when not NoKillDelay,
// replaces kill_delay, the seconds between SIGTERM and SIGKILL (-W N).
type DeleteOptions struct {
	Force     bool
	Purge     bool
	KillDelay int64
}

// NoKillDelay is DeleteOptions.KillDelay when qdel gave none.
const NoKillDelay = -1

// String encodes o as a request's Extra: "force,purge,delay=N", the parts
// that are set; "" for none.
func (o DeleteOptions) String() string {
	var parts []string
	if o.Force {
		parts = append(parts, "force")
	}
	if o.Purge {
		parts = append(parts, "purge")
	}
	if o.KillDelay >= 0 {
		parts = append(parts, "delay="+strconv.FormatInt(o.KillDelay, 10))
	}
	return strings.Join(parts, ",")
}

// ParseDeleteOptions reads what String wrote. The zero DeleteOptions is
// not "no options": use this on "" to get KillDelay NoKillDelay.
func ParseDeleteOptions(s string) (DeleteOptions, error) {
	o := DeleteOptions{KillDelay: NoKillDelay}
	if s == "" {
		return o, nil
	}
	for _, part := range strings.Split(s, ",") {
		switch {
		case part == "force":
			o.Force = true
		case part == "purge":
			o.Purge = true
		case strings.HasPrefix(part, "delay="):
			n, err := strconv.ParseInt(part[len("delay="):], 10, 64)
			if err != nil || n < 0 {
				return o, Errorf(PBSE_BADATVAL, "(delete option %q: want delay=<seconds>)", part)
			}
			o.KillDelay = n
		default:
			return o, Errorf(PBSE_BADATVAL, "(unknown delete option %q)", part)
		}
	}
	return o, nil
}

// SelectReply lists the matching job ids in submission order.
type SelectReply struct {
	IDs []string
}

// ManagerCommand is the qmgr verb.
type ManagerCommand uint8

// Manager commands.
const (
	MgrCreate ManagerCommand = 1
	MgrDelete ManagerCommand = 2
	MgrSet    ManagerCommand = 3
	MgrUnset  ManagerCommand = 4
)

// ObjectType is what a manager request operates on.
type ObjectType uint8

// Object types.
const (
	ObjServer ObjectType = 1
	ObjQueue  ObjectType = 2
	ObjNode   ObjectType = 3
	// ObjResource is a custom resource (resource.go).
	ObjResource ObjectType = 4
	// ObjSched is OpenPBS's scheduler object (qmgr "sched"); this system
	// has one scheduler, named DefaultSched.
	ObjSched ObjectType = 5
)

// DefaultSched is the name of the one scheduler object, OpenPBS's name
// for its default scheduler.
const DefaultSched = "default"

func (o ObjectType) String() string {
	switch o {
	case ObjServer:
		return "server"
	case ObjQueue:
		return "queue"
	case ObjNode:
		return "node"
	case ObjResource:
		return "resource"
	case ObjSched:
		return "sched"
	case ObjHook:
		return "hook"
	}
	return "object(" + strconv.Itoa(int(o)) + ")"
}

// ManagerRequest is a qmgr create, delete, set or unset on one object.
type ManagerRequest struct {
	Command ManagerCommand
	Object  ObjectType
	Name    string // "" for the server
	Attrs   []Attr
}

// WhoAmIReply tells a client how the server sees it (for tests and qmgr).
type WhoAmIReply struct {
	User       string
	Host       string
	Manager    bool
	Operator   bool
	ServerName string
}

// ShutdownManner is how qterm asks the server to treat running jobs.
type ShutdownManner uint8

// Shutdown manners, with the classic SHUT_* numbers.
const (
	// ShutImmediate stops every running job: rerunnable ones are
	// requeued, the others killed. Not supported: refused with PBSE_NOSUP.
	ShutImmediate ShutdownManner = 1
	// ShutDelay checkpoints and requeues checkpointable jobs and leaves the
	// rest running; without checkpoint support it is ShutQuick.
	ShutDelay ShutdownManner = 2
	// ShutQuick leaves running jobs running under their moms; they report
	// their ends when the server is back.
	ShutQuick ShutdownManner = 3
)

// ShutdownRequest is the body of Shutdown (qterm). The server answers,
// then stops; Scheduler and Moms ask it to stop those daemons too.
type ShutdownRequest struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Manner    ShutdownManner
	Scheduler bool
	Moms      bool
}
