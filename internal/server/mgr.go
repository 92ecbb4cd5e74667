package server

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/qsubopt"
	"github.com/gopbs/gopbs/internal/server/management"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// manager performs a qmgr create, delete, set or unset.
func (s *Server) manager(who *caller, req *proto.ManagerRequest) error {
	mgr, op := s.privileges(who)
	if !mgr && !op {
		return proto.Errorf(proto.PBSE_PERM, "qmgr requests need operator or manager privilege")
	}
	switch req.Command {
	case proto.MgrCreate, proto.MgrDelete:
		if req.Object == proto.ObjServer {
			return proto.Errorf(proto.PBSE_IVALREQ, "the server cannot be created or deleted")
		}
		if !mgr {
			return proto.Errorf(proto.PBSE_PERM, "creating and deleting %ss needs manager privilege", req.Object)
		}
	case proto.MgrSet, proto.MgrUnset:
		if len(req.Attrs) == 0 {
			return proto.Errorf(proto.PBSE_IVALREQ, "no attributes given")
		}
	default:
		return proto.Errorf(proto.PBSE_IVALREQ, "manager command %d", req.Command)
	}
	if req.Object == proto.ObjServer && len(req.Attrs) > 0 && req.Attrs[0].Name == proto.AttrServerMembers {
		return s.changeGroup(who, mgr, req)
	}
	if req.Object == proto.ObjResource {
		return s.mgrResource(who, mgr, req)
	}
	table := model.Defs(req.Object)
	if table == nil {
		return proto.Errorf(proto.PBSE_IVALREQ, "object type %d", req.Object)
	}
	for _, a := range req.Attrs {
		d, ok := table.Lookup(a.Name)
		if !ok {
			if req.Object == proto.ObjNode {
				return proto.Errorf(proto.PBSE_UNKNODEATR, "%s", a.FullName())
			}
			return proto.Errorf(proto.PBSE_NOATTR, "%s", a.FullName())
		}
		if !d.CanSet(mgr, op) {
			switch {
			case d.Access&model.ReadOnly != 0:
				return proto.Errorf(proto.PBSE_ATTRRO, "%s", a.FullName())
			case op:
				// OpenPBS answers an operator this way: the attribute is
				// read-only at the operator's privilege.
				return proto.Errorf(proto.PBSE_ATTRRO, "%s (needs manager privilege)", a.FullName())
			}
			return proto.Errorf(proto.PBSE_PERM, "%s needs manager privilege", a.FullName())
		}
	}
	if req.Command == proto.MgrUnset {
		for i := range req.Attrs {
			req.Attrs[i].Op = proto.OpUnset
		}
	}
	err := s.commit.Do(func(b *store.Batch) error {
		if req.Command != proto.MgrUnset && (req.Object == proto.ObjServer || req.Object == proto.ObjQueue) {
			if err := s.checkLimitStyles(req.Attrs); err != nil {
				return err
			}
		}
		switch req.Object {
		case proto.ObjServer:
			return s.mgrServer(b, req)
		case proto.ObjQueue:
			return s.queueMgmt.Manage(b, req)
		case proto.ObjSched:
			return s.mgrSched(b, req)
		}
		return s.nodeMgmt.Manage(b, req, s.nowUnix())
	})
	if err == nil && req.Object == proto.ObjSched && slices.ContainsFunc(req.Attrs, func(a proto.Attr) bool { return a.Name == proto.AttrLogEvents }) {
		// The scheduler reads its log_events at a CONFIGURE and at each
		// cycle: a change applies at once, as OpenPBS tells its scheduler.
		s.Reconfigure()
	}
	// The sched object's scheduling and scheduler_iteration are the
	// server's: setting them there has the same effects.
	if err == nil && (req.Object == proto.ObjServer || req.Object == proto.ObjSched) && req.Command == proto.MgrSet {
		for _, a := range req.Attrs {
			if a.Name == proto.AttrSchedulerIteration {
				s.schedWake()
			}
			if a.Name == proto.AttrScheduling {
				if on, _ := model.ServerDefs.Lookup(a.Name); on.Name != "" {
					if v, _ := on.Canonical("", a.Value); v == "True" {
						// Setting scheduling to True, even when it already
						// was, asks for a cycle at once.
						s.schedEvent(proto.SchedCmdSet)
					}
				}
			}
		}
	}
	if err == nil {
		s.log.Info("manager request", "command", mgrVerb(req.Command), "object", req.Object.String(), "name", req.Name, "attrs", attrsText(req.Attrs), "by", who.user+"@"+who.host)
	}
	return err
}

// changeGroup adds a member to the replicated group or removes one
// (qmgr -c "set server server_members += host:port", or -=). The change
// is raft's own (a configuration entry), not a record of the store.
func (s *Server) changeGroup(who *caller, mgr bool, req *proto.ManagerRequest) error {
	if !mgr {
		return proto.Errorf(proto.PBSE_PERM, "%s needs manager privilege", proto.AttrServerMembers)
	}
	if s.cfg.ChangeGroup == nil {
		return proto.Errorf(proto.PBSE_ATTRRO, "%s (this server is not a member of a replicated group: PBS_SERVER_PEERS)", proto.AttrServerMembers)
	}
	a := req.Attrs[0]
	if len(req.Attrs) != 1 || req.Command != proto.MgrSet || (a.Op != proto.OpIncr && a.Op != proto.OpDecr) {
		return proto.Errorf(proto.PBSE_IVALREQ, "change the group one member at a time: set server %s += host:port (or -=)", proto.AttrServerMembers)
	}
	if err := s.cfg.ChangeGroup(a.Op == proto.OpIncr, strings.TrimSpace(a.Value)); err != nil {
		return err
	}
	s.log.Info("manager request", "command", "set", "object", req.Object.String(), "attrs", attrsText(req.Attrs), "by", who.user+"@"+who.host)
	return nil
}

func mgrVerb(c proto.ManagerCommand) string {
	switch c {
	case proto.MgrCreate:
		return "create"
	case proto.MgrDelete:
		return "delete"
	case proto.MgrSet:
		return "set"
	}
	return "unset"
}

func attrsText(attrs []proto.Attr) string {
	parts := make([]string, len(attrs))
	for i, a := range attrs {
		parts[i] = a.FullName()
		if a.Op != proto.OpUnset {
			parts[i] += "=" + a.Value
		}
	}
	return strings.Join(parts, ",")
}

func (s *Server) mgrServer(b *store.Batch, req *proto.ManagerRequest) error {
	if req.Command != proto.MgrSet && req.Command != proto.MgrUnset {
		return proto.NewError(proto.PBSE_IVALREQ)
	}
	// next_job_number is the store's sequence, not a server attribute:
	// a manager may move it forward (never back: ids are never reused);
	// unset leaves it where it is, the next free id being its default.
	attrs := make([]proto.Attr, 0, len(req.Attrs))
	next := s.nextSeq
	for _, a := range req.Attrs {
		if a.Name != proto.AttrNextJobNumber {
			attrs = append(attrs, a)
			continue
		}
		if a.Op == proto.OpUnset {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(a.Value), 10, 64)
		if err != nil || a.Op != proto.OpSet || n < 0 {
			return proto.Errorf(proto.PBSE_BADATVAL, "next_job_number = %q (want a job number)", a.Value)
		}
		if n < s.nextSeq {
			return proto.Errorf(proto.PBSE_BADATVAL, "next_job_number %d is below the next free id %d: job ids are never reused", n, s.nextSeq)
		}
		next = n
	}
	c, err := management.ApplyAll(s.rt(), model.ServerDefs, s.server, attrs)
	if err != nil {
		return err
	}
	if v, ok := c.Get(proto.AttrDefaultQsubArguments); ok {
		// What qsub will take from it, read as qsub reads it.
		if _, err := qsubopt.ParseDefaults(v, qsubopt.Context{Cwd: "/", Host: s.cfg.Host, Now: s.now()}); err != nil {
			return proto.Errorf(proto.PBSE_BADATVAL, "(%v)", err)
		}
	}
	if next != s.nextSeq {
		s.nextSeq = next
		b.SetNextSeq(next)
	}
	if dq, ok := c.Get(proto.AttrDefaultQueue); ok && dq != "" {
		if _, exists := s.queues.Get(dq); !exists {
			return proto.Errorf(proto.PBSE_UNKQUE, "%s", dq)
		}
	}
	was := s.eligibleTimeOn()
	s.server = c
	b.PutServer(c)
	if on := s.eligibleTimeOn(); on != was {
		s.eligibleTimeSwitched(b, on)
	}
	return nil
}

// nodeInExecHost reports whether exec_host ("a/0*2+b/0") uses node.
func nodeInExecHost(execHost, node string) bool {
	for _, part := range strings.Split(execHost, "+") {
		h, _, _ := strings.Cut(part, "/")
		if h == node {
			return true
		}
	}
	return false
}

// statusServer answers qstat -B and qmgr list server.
func (s *Server) statusServer(who *caller, req *proto.StatusRequest) *proto.StatusReply {
	mgr, op := s.privileges(who)
	s.mu.RLock()
	defer s.mu.RUnlock()
	o := s.server.Clone()
	state := "Idle"
	if o.Bool(proto.AttrScheduling) {
		state = "Active"
		if s.schedulerBusy() {
			state = "Scheduling"
		}
	}
	o.Set(proto.AttrServerState, "", state)
	o.Set(proto.AttrServerHost, "", s.cfg.Host)
	if s.cfg.Group != nil {
		members, leader, term := s.cfg.Group()
		o.Set(proto.AttrServerMembers, "", strings.Join(members, ","))
		o.Set(proto.AttrServerLeader, "", leader)
		o.Set(proto.AttrServerTerm, "", strconv.FormatUint(term, 10))
	}
	counts, total := s.jobs.StateCount("")
	o.Set(proto.AttrTotalJobs, "", strconv.Itoa(total))
	o.Set(proto.AttrStateCount, "", counts)
	o.Set(proto.AttrPbsVersion, "", Version)
	o.Set(proto.AttrNextJobNumber, "", strconv.FormatInt(s.nextSeq, 10))
	return &proto.StatusReply{Objects: []proto.Status{{Name: s.cfg.ServerName, Attrs: model.ServerDefs.Status(o, mgr || op, model.WantSet(req.Attrs))}}}
}

// statusQueues answers qstat -Q and qmgr list queue.
func (s *Server) statusQueues(who *caller, req *proto.StatusRequest) (*proto.StatusReply, error) {
	mgr, op := s.privileges(who)
	return s.queueMgmt.Status(req, mgr || op), nil
}

// statusNodes answers pbsnodes, qmgr list node and schedulers. Nodes are
// rendered straight into attributes (not through a copy of the object as
// other objects are): a scheduler asks for every node each cycle.
func (s *Server) statusNodes(who *caller, req *proto.StatusRequest, to answerTo) (*statusAnswer, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	answer := newStatusAnswer(to, s.mu.RLocker())
	s.nodeView().Status(req, answer.frames, &answer.tail.Errors)
	return answer, nil
}
