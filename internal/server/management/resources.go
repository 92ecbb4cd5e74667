package management

import (
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Tables are the server's state, read under its lock: what a resource
// being deleted or retyped may be set on.
type Tables struct {
	Jobs   *state.Jobs
	Resvs  *state.Resvs
	Queues *state.Queues
	Nodes  *state.Nodes
	Server *model.Object
	// ServerName completes reservation ids in refusals.
	ServerName string
}

// Store is what the resource definitions need of the server.
type Store interface {
	// Commit runs change in the next commit group, with the server's
	// state locked for writing, and returns once what change put in the
	// batch is durable (or change's error, and then nothing is kept).
	Commit(change func(b *store.Batch) error) error
	// Tables are the server's tables (state locked, inside Commit).
	Tables() Tables
	// Resources is the resource table now (safe without the lock).
	Resources() *resc.Table
	// SetResources makes t the resource table and reads everything typed
	// with the old one again (inside Commit).
	SetResources(t *resc.Table)
}

// Resources handles the custom resource definitions.
type Resources struct {
	st Store
}

// NewResources makes the handler over st.
func NewResources(st Store) *Resources { return &Resources{st: st} }

// Manage creates, changes or deletes a custom resource (qmgr "create
// resource NAME type=T, flag=F", "set resource", "delete resource");
// managers only (mgr), as OpenPBS has it. A resource set anywhere (a
// job, a reservation, the server, a queue or a node) is neither deleted
// nor retyped.
func (h *Resources) Manage(req *proto.ManagerRequest, mgr bool) error {
	if !mgr {
		return proto.Errorf(proto.PBSE_PERM, "resources are defined by managers only")
	}
	if req.Command == proto.MgrUnset {
		return proto.Errorf(proto.PBSE_IVALREQ, "a resource's type and flag are set, not unset (set resource %s flag = \"\" clears the flags)", req.Name)
	}
	return h.st.Commit(func(b *store.Batch) error {
		old := h.st.Resources()
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
			if where := InUse(h.st.Tables(), old, req.Name); where != "" {
				return proto.Errorf(proto.PBSE_RESCBUSY, "%s: %s", where, req.Name)
			}
			b.DeleteResource(req.Name)
			h.st.SetResources(old.Without(req.Name))
			return nil
		}
		def, err := customFrom(req, cur, exists)
		if err != nil {
			return err
		}
		if exists && def.Type != cur.Type {
			if where := InUse(h.st.Tables(), old, req.Name); where != "" {
				return proto.Errorf(proto.PBSE_RESCBUSY, "%s: %s (its type cannot change while it is set)", where, req.Name)
			}
		}
		b.PutResource(def)
		h.st.SetResources(old.With(def))
		return nil
	})
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
		switch a.Name { // canonical already (the routes: model.ResourceDefs)
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

// InUse names an object of t that sets resource name: a job's request or
// usage (finished jobs' too, as OpenPBS counts them), a reservation's
// (its select read with rt), or a resources_* or limit attribute of the
// server, a queue or a node; "" when none does.
func InUse(t Tables, rt *resc.Table, name string) string {
	for _, j := range t.Jobs.List() {
		if jobSets(j, name) {
			return "job " + j.ID
		}
	}
	for r := range t.Resvs.All() {
		if sel, err := rt.ParseSelect(r.Select); err == nil && selectSets(sel, name) {
			return "reservation " + r.ID(t.ServerName)
		}
	}
	if objectSets(t.Server, name) {
		return "server"
	}
	for _, q := range t.Queues.Names() {
		if o, _ := t.Queues.Get(q); objectSets(o, name) {
			return "queue " + q
		}
	}
	for _, n := range t.Nodes.Names() {
		if o, _ := t.Nodes.Get(n); objectSets(o, name) {
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

// Status answers qmgr's list and print of resources and the scheduler's
// reading of them: every custom resource, or those named (the table is
// read without the server's lock).
func (h *Resources) Status(req *proto.StatusRequest) *proto.StatusReply {
	t := h.st.Resources()
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
