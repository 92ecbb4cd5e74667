package server

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// manager performs a qmgr create, delete, set, unset or import, then
// has the management hooks see it (hookloop.go).
func (s *Server) manager(who *caller, req *proto.ManagerRequest) error {
	t := s.now()
	err := s.manage(who, req)
	if req.Object != proto.ObjHook {
		s.managementHooks(who, req, t, err)
	}
	return err
}

// manage performs a qmgr request (manager).
func (s *Server) manage(who *caller, req *proto.ManagerRequest) error {
	mgr, op := s.privileges(who)
	if !mgr && !op {
		return proto.Errorf(proto.PBSE_PERM, "qmgr requests need operator or manager privilege")
	}
	if req.Object == proto.ObjHook {
		return s.mgrHook(who, mgr, req)
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
			if err := s.admitView().CheckLimitStyles(req.Attrs); err != nil {
				return err
			}
		}
		switch req.Object {
		case proto.ObjServer:
			return s.objMgmt.ManageServer(b, req, s.now())
		case proto.ObjQueue:
			return s.queueMgmt.Manage(b, req)
		case proto.ObjSched:
			return s.objMgmt.ManageSched(b, req)
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
	case proto.MgrImport:
		return "import"
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
