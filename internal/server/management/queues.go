package management

import (
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// QueueStore is what queue management needs of the server.
type QueueStore interface {
	// View runs read with the server's state locked for reading.
	View(read func())
	// Tables are the server's tables (state locked).
	Tables() Tables
	// Resources is the resource table now (safe without the lock).
	Resources() *resc.Table
	// PutServer makes c the server's attributes (inside a commit).
	PutServer(c *model.Object)
}

// Queues handles qmgr's create, set, unset, delete and list of queues.
type Queues struct {
	st  QueueStore
	log hclog.Logger
}

// NewQueues makes the handler over st.
func NewQueues(st QueueStore, log hclog.Logger) *Queues { return &Queues{st: st, log: log} }

// Manage applies req, whose attributes the caller checked against the
// queue definitions and the caller's privileges, to the queue it names
// (inside a commit: b takes what changes).
func (h *Queues) Manage(b *store.Batch, req *proto.ManagerRequest) error {
	t, rt := h.st.Tables(), h.st.Resources()
	name := req.Name
	q, exists := t.Queues.Get(name)
	switch req.Command {
	case proto.MgrCreate:
		if err := model.CheckQueueName(name); err != nil {
			return err
		}
		if exists {
			return proto.NewError(proto.PBSE_QUEEXIST)
		}
		c, err := ApplyAll(rt, model.QueueDefs, model.NewObject(name), req.Attrs)
		if err != nil {
			return err
		}
		if err := checkQueue(t, c); err != nil {
			return err
		}
		t.Queues.Put(c)
		b.PutQueue(c)
		return nil
	case proto.MgrDelete:
		if !exists {
			return proto.Errorf(proto.PBSE_UNKQUE, "%s", name)
		}
		if n := t.Jobs.Queued(name); n > 0 {
			return proto.Errorf(proto.PBSE_OBJBUSY, "queue %s has %d jobs", name, n)
		}
		if r, ok := t.Resvs.OfQueue(name); ok {
			return proto.Errorf(proto.PBSE_OBJBUSY, "queue %s is reservation %s's: delete it with pbs_rdel", name, r.ID(t.ServerName))
		}
		if dq, _ := t.Server.Get(proto.AttrDefaultQueue); dq == name {
			// As OpenPBS allows it; the server then has no default
			// queue (qsub without -q says so) until one is set.
			c := t.Server.Clone()
			c.Unset(proto.AttrDefaultQueue, "")
			h.st.PutServer(c)
			b.PutServer(c)
			h.log.Warn("the default queue was deleted: default_queue is unset", "queue", name)
		}
		// Finished jobs of the queue stay in history under its name.
		t.Queues.Delete(name)
		b.DeleteQueue(name)
		return nil
	}
	if !exists {
		return proto.Errorf(proto.PBSE_UNKQUE, "%s", name)
	}
	c, err := ApplyAll(rt, model.QueueDefs, q, req.Attrs)
	if err != nil {
		return err
	}
	if err := checkQueue(t, c); err != nil {
		return err
	}
	if typ, _ := c.Get(proto.AttrQueueTypeQ); typ != "Execution" {
		if was, _ := q.Get(proto.AttrQueueTypeQ); typ != was && t.Jobs.Queued(name) > 0 {
			return proto.Errorf(proto.PBSE_OBJBUSY, "queue %s has %d jobs; its type cannot change", name, t.Jobs.Queued(name))
		}
	}
	t.Queues.Put(c)
	b.PutQueue(c)
	return nil
}

// ApplyAll applies attrs to a copy of o, read with rt against t, and
// returns it; o is unchanged on error.
func ApplyAll(rt *resc.Table, t *model.DefTable, o *model.Object, attrs []proto.Attr) (*model.Object, error) {
	c := o.Clone()
	for _, a := range attrs {
		if err := t.ApplyIn(rt, c, a); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// checkQueue verifies a queue's definition is complete enough for its
// flags: enabling or starting needs a queue_type, and route destinations
// must name other queues of this server.
func checkQueue(t Tables, q *model.Object) error {
	if _, hasType := q.Get(proto.AttrQueueTypeQ); !hasType && (q.Bool(proto.AttrEnabled) || q.Bool(proto.AttrStarted)) {
		return proto.Errorf(proto.PBSE_QUENOEN, "queue %s: set queue_type first", q.Name)
	}
	if dests, ok := q.Get(proto.AttrRouteDestinations); ok {
		for _, d := range model.SplitList(dests) {
			if d == q.Name {
				return proto.Errorf(proto.PBSE_BADATVAL, "queue %s cannot route to itself", q.Name)
			}
			if strings.Contains(d, "@") {
				continue
			}
			if _, ok := t.Queues.Get(d); !ok {
				return proto.Errorf(proto.PBSE_UNKQUE, "%s (in route_destinations of %s)", d, q.Name)
			}
		}
	}
	return nil
}

// Status answers qstat -Q and qmgr's list of queues: the queues named
// (all, by name, when none are), each with its job counts;
// privileged callers (operators, managers) see every attribute.
func (h *Queues) Status(req *proto.StatusRequest, privileged bool) *proto.StatusReply {
	want := model.WantSet(req.Attrs)
	reply := &proto.StatusReply{}
	h.st.View(func() {
		t := h.st.Tables()
		names := req.IDs
		if len(names) == 0 {
			names = t.Queues.Names()
		}
		for _, raw := range names {
			name, _, _ := strings.Cut(strings.TrimSpace(raw), "@")
			q, ok := t.Queues.Get(name)
			if !ok {
				reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_UNKQUE, Text: proto.PBSE_UNKQUE.Message()})
				continue
			}
			o := q.Clone()
			counts, total := t.Jobs.StateCount(name)
			o.Set(proto.AttrTotalJobs, "", strconv.Itoa(total))
			o.Set(proto.AttrStateCount, "", counts)
			reply.Objects = append(reply.Objects, proto.Status{Name: name, Attrs: model.QueueDefs.Status(o, privileged, want)})
		}
	})
	return reply
}
