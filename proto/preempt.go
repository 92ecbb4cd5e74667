package proto

// Preemption. The scheduler asks the server to preempt running jobs for
// a job of a higher rank, each with the methods to try in order (letters
// of preempt_order: S suspend, C checkpoint, R requeue); the server tries
// them, as OpenPBS's preempt_jobs request does, and answers which one
// worked for each job. A suspended job's resources are free once the
// answer comes; a requeued or checkpointed job's once it has left its
// nodes. The scheduler resumes a job it suspended with SignalJob
// "resume", which the server grants only when the job's resources are
// free again.
//
// To checkpoint a job the server asks its first mom (MomCheckpoint, with
// a MomSignal body): the mom runs the checkpoint action of its
// mom_priv/config ($action checkpoint_abort) and, when it succeeds, ends
// the job, whose end puts it back in its queue. A mom without that action
// refuses with PBSE_NOSUP, and the server goes on to the next method.
const (
	MsgPreemptJobs   MsgType = 36 // scheduler -> server: PreemptJobsRequest, reply PreemptJobsReply
	MsgMomCheckpoint MsgType = 48 // server -> mom: MomSignal (JobID, KillDelay), reply empty
)

func init() {
	msgNames[MsgPreemptJobs] = "PreemptJobs"
	msgNames[MsgMomCheckpoint] = "MomCheckpoint"
}

// Preemption methods, as preempt_order writes them.
const (
	PreemptSuspend    = 'S'
	PreemptCheckpoint = 'C'
	PreemptRequeue    = 'R'
)

// PreemptJobsRequest preempts running jobs, each on its own.
type PreemptJobsRequest struct {
	Jobs []PreemptSpec
}

// PreemptSpec is one job to preempt: Methods are the letters to try in
// order; For names the job it is preempted for (its comment says so).
type PreemptSpec struct {
	_msgpack struct{} `msgpack:",as_array"`
	JobID    string
	Methods  string
	For      string
}

// PreemptJobsReply has one result per PreemptSpec, in order.
type PreemptJobsReply struct {
	Results []PreemptResult
}

// PreemptResult says how a job was preempted: Method is the letter of the
// method that worked, 0 when none did (Code and Text say why the last
// one failed).
type PreemptResult struct {
	_msgpack struct{} `msgpack:",as_array"`
	JobID    string
	Method   byte
	Code     Code
	Text     string
}

// PreemptJobs preempts jobs; the reply has one result per spec.
func (c *Client) PreemptJobs(specs []PreemptSpec) ([]PreemptResult, error) {
	var reply PreemptJobsReply
	err := c.Call(MsgPreemptJobs, &PreemptJobsRequest{Jobs: specs}, &reply)
	return reply.Results, err
}
