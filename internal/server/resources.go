package server

import (
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// rt is the resource table: the built-ins and the site's custom
// resources. Safe without mu; a request parsed with it is checked again
// under mu only where a definition's change would matter (deletion).
func (s *Server) rt() *resc.Table { return s.resources.Load() }

// mgrResource creates, changes or deletes a custom resource (qmgr
// "create resource NAME type=T, flag=F", "set resource", "delete
// resource"); managers only, as OpenPBS has it.
func (s *Server) mgrResource(who *caller, mgr bool, req *proto.ManagerRequest) error {
	if !mgr {
		return proto.Errorf(proto.PBSE_PERM, "resources are defined by managers only")
	}
	if req.Command == proto.MgrUnset {
		return proto.Errorf(proto.PBSE_IVALREQ, "a resource's type and flag are set, not unset (set resource %s flag = \"\" clears the flags)", req.Name)
	}
	err := s.commit.Do(func(b *store.Batch) error {
		old := s.rt()
		cur, exists := old.Custom(req.Name)
		switch {
		case req.Command == proto.MgrCreate && exists:
			return proto.Errorf(proto.PBSE_DUPLIST, "(resource %s exists)", req.Name)
		case req.Command == proto.MgrCreate && resc.Known(req.Name) && !resc.OpenPBSCustom(req.Name):
			return proto.Errorf(proto.PBSE_DUPLIST, "(%s is a built-in resource)", req.Name)
		case req.Command != proto.MgrCreate && !exists:
			return proto.Errorf(proto.PBSE_UNKRESC, "%s", req.Name)
		}
		if req.Command == proto.MgrDelete {
			if where := s.resourceInUse(req.Name); where != "" {
				return proto.Errorf(proto.PBSE_RESCBUSY, "%s: %s", where, req.Name)
			}
			b.DeleteResource(req.Name)
			s.setResources(old.Without(req.Name))
			return nil
		}
		def, err := customFrom(req, cur, exists)
		if err != nil {
			return err
		}
		if exists && def.Type != cur.Type {
			if where := s.resourceInUse(req.Name); where != "" {
				return proto.Errorf(proto.PBSE_RESCBUSY, "%s: %s (its type cannot change while it is set)", where, req.Name)
			}
		}
		b.PutResource(def)
		s.setResources(old.With(def))
		return nil
	})
	if err == nil {
		s.log.Info("manager request", "command", mgrVerb(req.Command), "object", req.Object.String(), "name", req.Name, "attrs", attrsText(req.Attrs), "by", who.user+"@"+who.host)
	}
	return err
}

// customFrom reads a create's or set's type and flag over cur (a new
// resource is a long without flags, as OpenPBS makes it).
func customFrom(req *proto.ManagerRequest, cur resc.Custom, exists bool) (resc.Custom, error) {
	typ, flags := resc.TypeLong, resc.Flag(0)
	if exists {
		typ, flags = cur.Type, cur.Flags
	}
	for _, a := range req.Attrs {
		if a.Resource != "" || a.Op != proto.OpSet {
			return resc.Custom{}, proto.Errorf(proto.PBSE_IVALREQ, "%s: a resource's attributes are set with =", a.FullName())
		}
		var err error
		switch a.Name { // canonical already (conn.go: model.ResourceDefs)
		case proto.AttrResourceType:
			typ, err = resc.ParseTypeName(strings.TrimSpace(a.Value))
		case proto.AttrResourceFlag:
			flags, err = resc.ParseFlags(strings.TrimSpace(a.Value))
		default:
			return resc.Custom{}, proto.Errorf(proto.PBSE_NOATTR, "%s (a resource has type and flag)", a.Name)
		}
		if err != nil {
			return resc.Custom{}, proto.Errorf(proto.PBSE_BADATVAL, "%s: %v", a.Name, err)
		}
	}
	c, err := resc.NewCustom(req.Name, typ, flags)
	if err != nil {
		return resc.Custom{}, proto.Errorf(proto.PBSE_BADATVAL, "(%v)", err)
	}
	return c, nil
}

// setResources makes t the resource table and reads every job's request
// again with it (mu held): what a job takes is counted as its resources'
// new types.
func (s *Server) setResources(t *resc.Table) {
	s.resources.Store(t)
	for _, j := range s.jobs.List() {
		s.jobs.Recount(j, func() {})
	}
	s.nodes.Retype()
}

// resourceInUse names an object that sets resource name (mu held): a
// job's request or usage (finished jobs' too, as OpenPBS counts them), a
// reservation's, or a resources_* or limit attribute of the server, a
// queue or a node; "" when none does.
func (s *Server) resourceInUse(name string) string {
	for _, j := range s.jobs.List() {
		if jobSets(j, name) {
			return "job " + j.ID
		}
	}
	for r := range s.resvs.All() {
		if sel, err := s.rt().ParseSelect(r.Select); err == nil && selectSets(sel, name) {
			return "reservation " + r.ID(s.cfg.ServerName)
		}
	}
	if objectSets(s.server, name) {
		return "server"
	}
	for _, q := range s.queues.Names() {
		if o, _ := s.queues.Get(q); objectSets(o, name) {
			return "queue " + q
		}
	}
	for _, n := range s.nodes.Names() {
		if o, _ := s.nodes.Get(n); objectSets(o, name) {
			return "node " + n
		}
	}
	return ""
}

func jobSets(j *model.Job, name string) bool {
	for _, list := range []model.Resources{j.ResourceList, j.ResourcesUsed} {
		if _, ok := list.Get(name); ok {
			return true
		}
	}
	req, err := j.Request()
	return err == nil && selectSets(req.Select, name)
}

func selectSets(sel resc.Select, name string) bool {
	for _, c := range sel {
		if _, ok := c.Get(name); ok {
			return true
		}
	}
	return false
}

func objectSets(o *model.Object, name string) bool {
	for _, m := range o.Resources {
		if _, ok := m[name]; ok {
			return true
		}
	}
	return false
}

// statusResources answers qmgr's list and print of resources and the
// scheduler's reading of them: every custom resource, or those named.
func (s *Server) statusResources(req *proto.StatusRequest) *proto.StatusReply {
	t := s.rt()
	reply := &proto.StatusReply{}
	want := model.WantSet(req.Attrs)
	render := func(c resc.Custom) {
		var attrs []proto.Attr
		if want == nil || want[proto.AttrResourceType] {
			attrs = append(attrs, proto.Attr{Name: proto.AttrResourceType, Value: resc.TypeName(c.Type)})
		}
		if f := c.Flags.String(); f != "" && (want == nil || want[proto.AttrResourceFlag]) {
			attrs = append(attrs, proto.Attr{Name: proto.AttrResourceFlag, Value: f})
		}
		reply.Objects = append(reply.Objects, proto.Status{Name: c.Name, Attrs: attrs})
	}
	if len(req.IDs) == 0 {
		for _, c := range t.Customs() {
			render(c)
		}
		return reply
	}
	for _, raw := range req.IDs {
		name, _, _ := strings.Cut(strings.TrimSpace(raw), "@")
		if c, ok := t.Custom(name); ok {
			render(c)
			continue
		}
		reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_UNKRESC, Text: proto.PBSE_UNKRESC.Message()})
	}
	return reply
}
