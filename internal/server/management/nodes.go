package management

import (
	"slices"
	"strconv"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// NodeStore is what node management needs of the server.
type NodeStore interface {
	// Tables are the server's tables (state locked).
	Tables() Tables
	// Resources is the resource table now (safe without the lock).
	Resources() *resc.Table
}

// Nodes handles qmgr's create, set, unset and delete of nodes.
type Nodes struct {
	st NodeStore
	// momPort is the port of a node created without one
	// (PBS_MOM_SERVICE_PORT).
	momPort int
}

// NewNodes makes the handler over st; nodes are created with mom port
// momPort unless the request names one.
func NewNodes(st NodeStore, momPort int) *Nodes { return &Nodes{st: st, momPort: momPort} }

// Manage applies req, whose attributes the caller checked against the
// node definitions and the caller's privileges, to the node it names, at
// now (inside a commit: b takes what changes). A node a running job uses
// is not deleted; "delete node @default" (no name) deletes every node,
// or none if one is busy.
func (h *Nodes) Manage(b *store.Batch, req *proto.ManagerRequest, now int64) error {
	t, rt := h.st.Tables(), h.st.Resources()
	name := req.Name
	n, exists := t.Nodes.Get(name)
	switch req.Command {
	case proto.MgrCreate:
		if err := model.CheckNodeName(name); err != nil {
			return err
		}
		if exists {
			return proto.NewError(proto.PBSE_NODEEXIST)
		}
		c, err := ApplyAll(rt, model.NodeDefs, model.NewNode(name, name, strconv.Itoa(h.momPort), name), req.Attrs)
		if err != nil {
			return err
		}
		c.Set(proto.AttrNodeLastState, "", strconv.FormatInt(now, 10))
		t.Nodes.Put(c)
		b.PutNode(c)
		return nil
	case proto.MgrDelete:
		names := []string{name}
		if name == "" {
			names = slices.Clone(t.Nodes.Names())
		} else if !exists {
			return proto.Errorf(proto.PBSE_UNKNODE, "%s", name)
		}
		for _, j := range t.Jobs.List() {
			if !j.Active() {
				continue
			}
			on := j.ChunkNodes()
			for _, n := range names {
				if slices.Contains(on, n) {
					return proto.Errorf(proto.PBSE_OBJBUSY, "node %s runs job %s", n, j.ID)
				}
			}
		}
		for _, n := range names {
			t.Nodes.Delete(n)
			b.DeleteNode(n)
		}
		return nil
	}
	if !exists {
		return proto.Errorf(proto.PBSE_UNKNODE, "%s", name)
	}
	c, err := ApplyAll(rt, model.NodeDefs, n, req.Attrs)
	if err != nil {
		return err
	}
	model.ClearHealthMark(c, req.Attrs)
	was, _ := n.Get(proto.AttrNodeState)
	if st, _ := c.Get(proto.AttrNodeState); st != was {
		c.Set(proto.AttrNodeLastState, "", strconv.FormatInt(now, 10))
	}
	t.Nodes.Put(c)
	b.PutNode(c)
	return nil
}
