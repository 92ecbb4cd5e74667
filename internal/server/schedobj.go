package server

import (
	"net"
	"strconv"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/management"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// The sched object as shown: OpenPBS's scheduler object (qmgr list
// sched), its own attributes and the server's view of its scheduler.
// Setting it is management.Objects.ManageSched's.

// statusSched answers qmgr list sched and the scheduler's own question
// (its log_events). A name other than default is unknown, as OpenPBS
// answers for a scheduler it does not have.
func (s *Server) statusSched(who *caller, req *proto.StatusRequest) *proto.StatusReply {
	mgr, op := s.privileges(who)
	reply := &proto.StatusReply{}
	for _, raw := range req.IDs {
		if !management.SchedNamed(raw) {
			reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_UNKSCHED, Text: proto.PBSE_UNKSCHED.Message()})
		}
	}
	if len(req.IDs) > 0 && len(reply.Errors) == len(req.IDs) {
		return reply
	}
	s.mu.RLock()
	o := s.schedView()
	s.mu.RUnlock()
	reply.Objects = []proto.Status{{Name: proto.DefaultSched, Attrs: model.SchedDefs.Status(o, mgr || op, model.WantSet(req.Attrs))}}
	return reply
}

// schedView is the sched object as shown (mu held): its own attributes,
// the server's shared ones with the defaults the server acts on when they
// are unset (OpenPBS sets them all when it makes the object), and the
// server's view of the scheduler. An unset log_events is not shown:
// sched_config's log_filter alone decides then (sched/logevents.go), and
// OpenPBS's default, 767, would claim a mask nothing applies.
func (s *Server) schedView() *model.Object {
	o := s.schedObj.Clone()
	o.Name = proto.DefaultSched
	o.Set(proto.AttrScheduling, "", resc.FormatBool(s.server.Bool(proto.AttrScheduling)))
	o.Set(proto.AttrSchedulerIteration, "", strconv.FormatInt(s.serverLong(proto.AttrSchedulerIteration, defaultSchedIteration), 10))
	o.Set(proto.AttrSchedCycleLength, "", resc.FormatDuration(int64(s.cycleLimit().Seconds())))
	if host, port, err := net.SplitHostPort(s.cfg.SchedAddr); err == nil {
		o.Set(proto.AttrSchedHost, "", host)
		o.Set(proto.AttrSchedPort, "", port)
	}
	if s.cfg.SchedPriv != "" {
		o.Set(proto.AttrSchedPriv, "", s.cfg.SchedPriv)
	}
	if s.cfg.SchedLogs != "" {
		o.Set(proto.AttrSchedLog, "", s.cfg.SchedLogs)
	}
	o.Set(proto.AttrSchedState, "", s.schedState())
	// The server's version: pbs_sched is built with it, and the
	// scheduler does not tell its own.
	o.Set(proto.AttrPbsVersion, "", Version)
	return o
}

// schedState is OpenPBS's state of a scheduler: scheduling while a cycle
// is open, down when the server's last attempt to reach it failed, idle
// otherwise.
func (s *Server) schedState() string {
	ss := &s.sched
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.busy:
		return "scheduling"
	case ss.down:
		return "down"
	}
	return "idle"
}
