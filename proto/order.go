package proto

// MsgOrderJob exchanges the places of two jobs in the server's job order
// (qorder, OpenPBS's pbs_orderjob): a JobRequest whose JobID is the first
// job and Extra the second. Jobs of different queues also exchange
// queues. The reply is empty.
const MsgOrderJob MsgType = 37

func init() { msgNames[MsgOrderJob] = "OrderJob" }

// OrderJob exchanges the queue order of jobs id1 and id2 (qorder).
func (c *Client) OrderJob(id1, id2 string) error { return c.jobOp(MsgOrderJob, id1, id2) }
