package proto

import "strings"

// A job on several nodes (OpenPBS's mother superior and sisters) and the
// tasks started on them.
//
// At a job's start its first node's mom (the mother superior) asks the mom
// of every other node of the job (MomJob.Moms) to join it: each sister
// makes the job's confinement and TMPDIR and keeps the job until the
// mother superior ends it (MsgMomEndJob, answered with what the job used
// there) or the server's answer to a status report names it (Kill). A
// sister that cannot join refuses; the mother superior then ends the
// sisters that joined and refuses the start.
//
// Tasks: pbsdsh and pbs_tmrsh, run inside a job, send a TaskSpawn on
// their host's mom socket (PBS_HOME/pbs_mom.sock). That mom checks the
// caller (the job's owner by the kernel's word, holding the job's task
// cookie) and the target (a node of the job), and starts the task itself
// or forwards the request to the target node's mom over the mom port
// (RoleMom, the cluster key), which checks again. The connection then
// carries the task's streams: TaskData frames both ways (the caller's
// stdin one way, the task's stdout and stderr the other), and one
// TaskExit from the task's side when it ended. Either side closing the
// connection early kills the task.
const (
	MsgMomJoinJob MsgType = 58 // mother superior -> sister: JoinJob, reply empty
	MsgMomEndJob  MsgType = 59 // mother superior -> sister: EndJob, reply SisterUsage
	MsgTaskSpawn  MsgType = 43 // command -> mom, mom -> mom: TaskSpawn, reply TaskStarted, then the streams
	MsgTaskData   MsgType = 44 // either way: TaskData
	MsgTaskExit   MsgType = 45 // the task's side: TaskExit, the last frame
)

func init() {
	msgNames[MsgMomJoinJob] = "MomJoinJob"
	msgNames[MsgMomEndJob] = "MomEndJob"
	msgNames[MsgTaskSpawn] = "TaskSpawn"
	msgNames[MsgTaskData] = "TaskData"
	msgNames[MsgTaskExit] = "TaskExit"
}

// SisterJoinError is the mother superior's refusal when the mom of node
// would not join job (why): the server reads the node back from it
// (SisterJoinNode) to mark it.
func SisterJoinError(node, job, why string) *Error {
	return Errorf(PBSE_MOMREJECT, ": sister node %s cannot join job %s: %s", node, job, why)
}

// SisterJoinNode is the node a SisterJoinError names, if text is one.
func SisterJoinNode(text string) (string, bool) {
	_, rest, ok := strings.Cut(text, "sister node ")
	if !ok {
		return "", false
	}
	node, _, ok := strings.Cut(rest, " cannot join job ")
	return node, ok && node != "" && !strings.ContainsAny(node, " \n")
}

// NodeMom is one node of a job and the address of its mom.
type NodeMom struct {
	_msgpack struct{} `msgpack:",as_array"`
	Node     string
	Addr     string // host:port of the mom's service port
}

// JoinJob asks a sister to take its part of a job. Job is the mother
// superior's MomJob (no script, no staging lists) with its TaskCookie.
type JoinJob struct {
	Job MomJob
}

// EndJob asks a sister to end its part of a job: kill its tasks, remove
// its confinement and TMPDIR, and say what the job used there.
type EndJob struct {
	JobID    string
	RunCount int
	// Grace is how long the sister lets the job's tasks there end by
	// themselves before it kills them (a graceful shrink), in seconds.
	Grace int
	// Aborted is set when the job's start was given up (a sister refused
	// to join, or the first node could not start it): the sister runs
	// its execjob_abort hooks rather than its execjob_end ones.
	Aborted bool
}

// SisterUsage is what a job used on a sister (its tasks' cpu time, its
// cgroup's memory peak).
type SisterUsage struct {
	Used Usage
}

// TaskSpawn starts a process on a node of the caller's job.
type TaskSpawn struct {
	JobID  string
	Cookie string // the job's PBS_JOBCOOKIE, which only its processes hold
	// Node is where the task runs: a node of the job (as PBS_NODEFILE
	// names it); "" for the node of the mom asked.
	Node string
	// Argv is the program and its arguments, run as they are (pbsdsh);
	// with Shell set they are joined with spaces and run by the owner's
	// login shell, as rsh runs its command (pbs_tmrsh).
	Argv  []string
	Shell bool
	// Stdin is set when the caller sends its standard input (TaskData on
	// stream 0); without it the task's standard input is /dev/null.
	Stdin bool
	// Env is added to the job's environment for the task (pbsdsh's
	// PBS_TASKNUM and PBS_VNODENUM).
	Env map[string]string
	// Detach keeps the task running when its caller goes away (pbsdsh
	// -o): its output is then dropped.
	Detach bool
	// Forwarded is set by the mom that forwards a request to the target
	// node's mom: it checked the caller's uid.
	Forwarded bool
	UID       uint32 // the caller's uid, as the forwarding mom's kernel said
}

// TaskStarted answers a TaskSpawn that started: the node it runs on and
// the task's process id there.
type TaskStarted struct {
	Node string
	PID  int
}

// Task streams.
const (
	StreamStdin  = 0
	StreamStdout = 1
	StreamStderr = 2
)

// TaskData is a piece of one of a task's streams; EOF closes the stream.
type TaskData struct {
	_msgpack struct{} `msgpack:",as_array"`
	Stream   uint8
	Data     []byte
	EOF      bool
}

// TaskExit is a task's end: its exit status as a shell reports it (the
// code, or 128+N for signal N, as OpenPBS's tasks report a kill), and
// why the task was killed when it was (the job ended, its lease lapsed).
type TaskExit struct {
	Status  int
	Comment string
}
