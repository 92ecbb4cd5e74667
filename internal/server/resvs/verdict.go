package resvs

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// Verdict is what a scheduler's answer on a reservation (MsgConfirmResv)
// did to it.
type Verdict uint8

// Verdicts.
const (
	// Denied: an unconfirmed reservation found no room; it goes.
	Denied Verdict = iota + 1
	// AlterationDenied: the new times of a pbs_ralter found no room; the
	// times before it are back.
	AlterationDenied
	// Degraded: a confirmed or running reservation lost nodes and found
	// no others; it is tried again reserve_retry_time on.
	Degraded
	// StillDegraded: a degraded one tried again found no room either.
	StillDegraded
	// Confirmed: an unconfirmed reservation got its nodes.
	Confirmed
	// Moved: a degraded, confirmed or running one got other nodes.
	Moved
	// Altered: an alteration's new times were confirmed.
	Altered
)

// String is the verdict as the server's log says it.
func (v Verdict) String() string {
	switch v {
	case Denied:
		return "denied"
	case AlterationDenied:
		return "alteration denied"
	case Degraded:
		return "degraded"
	case StillDegraded:
		return "still degraded"
	case Confirmed:
		return "confirmed"
	case Moved:
		return "moved"
	case Altered:
		return "altered"
	}
	return "none"
}

// Judge applies a scheduler's answer on r at now: no nodes is "no room"
// (reason says why), else one placement per occurrence, checked against
// the nodes as they are (CheckNodes) before anything changes. retry is
// reserve_retry_time in seconds. It changes r as the verdict says (its
// state through SetState); the caller stores it, and for Denied removes
// it and its queue. A verdict the reservation's state cannot take is
// PBSE_BADSTATE, and r is then unchanged.
func (v View) Judge(r *model.Resv, nodes []string, reason string, now, retry int64) (Verdict, error) {
	if len(nodes) == 0 {
		switch r.State {
		case proto.ResvUnconfirmed:
			return Denied, nil
		case proto.ResvBeingAltered:
			r.Occ[0].Start, r.Duration = r.Before.Start, r.Before.Duration
			r.SetState(r.Before.State)
			r.Before = nil
			r.Comment = "Alteration denied: " + reason
			return AlterationDenied, nil
		case proto.ResvConfirmed, proto.ResvRunning:
			r.SetState(proto.ResvDegraded)
			r.Comment = reason
			r.Retry = now + retry
			return Degraded, nil
		case proto.ResvDegraded:
			r.Comment = reason
			r.Retry = now + retry
			return StillDegraded, nil
		}
		return 0, proto.Errorf(proto.PBSE_BADSTATE, "(%s is %s)", r.ID(v.ServerName), r.State)
	}
	if len(nodes) != len(r.Occ) {
		return 0, proto.Errorf(proto.PBSE_BADATVAL, "(%d placements for %d occurrences)", len(nodes), len(r.Occ))
	}
	if err := v.CheckNodes(r, nodes); err != nil {
		return 0, err
	}
	was := r.State
	for i := range r.Occ {
		r.Occ[i].Nodes = nodes[i]
	}
	r.Before = nil
	r.Retry = 0
	r.SetState(proto.ResvConfirmed)
	if r.Start() <= now && was != proto.ResvUnconfirmed {
		r.SetState(proto.ResvRunning)
	}
	r.Comment = ""
	r.Mtime = now
	switch was {
	case proto.ResvUnconfirmed:
		return Confirmed, nil
	case proto.ResvDegraded, proto.ResvConfirmed, proto.ResvRunning:
		return Moved, nil
	}
	return Altered, nil
}
