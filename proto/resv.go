package proto

import "strconv"

// Reservations (pbs_rsub, pbs_rstat, pbs_rdel, pbs_ralter) and their
// confirmation by the scheduler. A reservation is named as OpenPBS names
// it: R<seq>.<server> for an advance one, S<seq> for a standing one, M<seq>
// for a maintenance one; its queue is the id's first part (R12).
const (
	// MsgSubmitResv makes a reservation: a ResvSubmitRequest, reply
	// ResvSubmitReply.
	MsgSubmitResv MsgType = 31
	// MsgStatusResv asks for reservations: a StatusRequest (IDs empty:
	// all), reply StatusReply.
	MsgStatusResv MsgType = 32
	// MsgDeleteResv deletes a reservation and ends its jobs: a
	// ResvRequest, reply empty.
	MsgDeleteResv MsgType = 33
	// MsgAlterResv changes a reservation's start, end or users: a
	// ResvAlterRequest, reply ResvSubmitReply (the state it is left in).
	MsgAlterResv MsgType = 34
	// MsgConfirmResv is the scheduler's verdict on a reservation that
	// waits for one (unconfirmed, altered, or degraded by a node that
	// went down): a ResvConfirm, reply empty.
	MsgConfirmResv MsgType = 35
)

func init() {
	msgNames[MsgSubmitResv] = "SubmitResv"
	msgNames[MsgStatusResv] = "StatusResv"
	msgNames[MsgDeleteResv] = "DeleteResv"
	msgNames[MsgAlterResv] = "AlterResv"
	msgNames[MsgConfirmResv] = "ConfirmResv"
}

// ResvState is a reservation's state, OpenPBS's numbers (resv_states).
type ResvState int

// Reservation states.
const (
	ResvNone         ResvState = 0
	ResvUnconfirmed  ResvState = 1
	ResvConfirmed    ResvState = 2
	ResvWait         ResvState = 3
	ResvTimeToRun    ResvState = 4
	ResvRunning      ResvState = 5
	ResvFinished     ResvState = 6
	ResvBeingDeleted ResvState = 7
	ResvDeleted      ResvState = 8
	ResvDeletingJobs ResvState = 9
	ResvDegraded     ResvState = 10
	ResvBeingAltered ResvState = 11
	ResvInConflict   ResvState = 12
)

var resvShort = [...]string{"NO", "UN", "CO", "WT", "TR", "RN", "FN", "BD", "DE", "DJ", "DG", "AL", "IC"}

var resvLong = [...]string{"RESV_NONE", "RESV_UNCONFIRMED", "RESV_CONFIRMED", "RESV_WAIT", "RESV_TIME_TO_RUN",
	"RESV_RUNNING", "RESV_FINISHED", "RESV_BEING_DELETED", "RESV_DELETED", "RESV_DELETING_JOBS",
	"RESV_DEGRADED", "RESV_BEING_ALTERED", "RESV_IN_CONFLICT"}

// Short is the state as pbs_rstat's listing shows it ("CO").
func (s ResvState) Short() string {
	if s >= 0 && int(s) < len(resvShort) {
		return resvShort[s]
	}
	return strconv.Itoa(int(s))
}

// String is the state as pbs_rstat -f shows it ("RESV_CONFIRMED").
func (s ResvState) String() string {
	if s >= 0 && int(s) < len(resvLong) {
		return resvLong[s]
	}
	return strconv.Itoa(int(s))
}

// Wire is the state as reserve_state carries it: OpenPBS's number.
func (s ResvState) Wire() string { return strconv.Itoa(int(s)) }

// ParseResvState reads reserve_state as it comes over the wire.
func ParseResvState(v string) (ResvState, bool) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n >= len(resvLong) {
		return ResvNone, false
	}
	return ResvState(n), true
}

// ResvSubmitRequest makes a reservation. Attrs are what pbs_rsub set
// (reserve_start, reserve_end, Resource_List.select and .walltime for a
// duration, Authorized_Users, reserve_rrule and reserve_timezone, ...);
// Hosts, when set, asks for a maintenance reservation of those whole
// hosts (pbs_rsub --hosts), which only a manager may make.
type ResvSubmitRequest struct {
	Attrs []Attr
	Hosts []string
}

// ResvSubmitReply names the reservation and the state it is in
// ("R12.srv", UNCONFIRMED): pbs_rsub prints both.
type ResvSubmitReply struct {
	ID    string
	State ResvState
}

// ResvRequest names a reservation.
type ResvRequest struct {
	ID string
}

// ResvAlterRequest changes a reservation (pbs_ralter): reserve_start,
// reserve_end, reserve_duration, Authorized_Users, Authorized_Groups,
// Reserve_Name, Mail_Points, Mail_Users.
type ResvAlterRequest struct {
	ID    string
	Attrs []Attr
}

// ResvConfirm is the scheduler's verdict on a reservation. With Nodes it
// is confirmed on them: one exec_vnode-like string per occurrence from
// the current one on ("(n1:ncpus=2)+(n2:ncpus=2)"). Without, it is
// refused with Reason: an unconfirmed reservation is denied and goes, a
// confirmed one that lost a node is left DEGRADED with Reason as its
// comment.
type ResvConfirm struct {
	ID     string
	Nodes  []string
	Reason string
}

// SubmitResv makes a reservation.
func (c *Client) SubmitResv(req *ResvSubmitRequest) (ResvSubmitReply, error) {
	var reply ResvSubmitReply
	err := c.Call(MsgSubmitResv, req, &reply)
	return reply, err
}

// StatusResvs returns the named reservations, or all.
func (c *Client) StatusResvs(req *StatusRequest) ([]Status, []ObjectError, error) {
	return c.status(MsgStatusResv, req)
}

// DeleteResv deletes a reservation.
func (c *Client) DeleteResv(id string) error { return c.Call(MsgDeleteResv, &ResvRequest{ID: id}, nil) }

// AlterResv changes a reservation and returns the state it is left in.
func (c *Client) AlterResv(req *ResvAlterRequest) (ResvSubmitReply, error) {
	var reply ResvSubmitReply
	err := c.Call(MsgAlterResv, req, &reply)
	return reply, err
}

// ConfirmResv sends the scheduler's verdict on a reservation.
func (c *Client) ConfirmResv(req *ResvConfirm) error { return c.Call(MsgConfirmResv, req, nil) }
