package server

// A mom's vnode definitions made durable: what they ask of the node table
// is internal/server/nodes' DefChanges, and the vnodes' reports are
// recorded by state.Nodes (ReportVnodes).

import (
	"strconv"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/nodes"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// applyVnodeDefs makes a report's vnode changes durable, creating vnodes
// on the reporting mom (its Mom and Port, its host) and recording their
// status at once; it reports whether it created one.
func (s *Server) applyVnodeDefs(st *proto.MomStatus, defs []nodes.VnodeDef) bool {
	var created []string
	err := s.commit.Do(func(b *store.Batch) error {
		created = created[:0]
		owner, _ := s.nodes.Get(st.Node)
		if owner == nil {
			return nil // deleted meanwhile
		}
		now := s.now()
		for _, d := range defs {
			n, _ := s.nodes.Get(d.Name)
			var c *model.Object
			switch {
			case d.Create && n == nil:
				mom, _ := owner.Get(proto.AttrNodeMom)
				port, _ := owner.Get(proto.AttrNodePort)
				c = model.NewNode(d.Name, mom, port, s.nodes.Host(st.Node))
				c.Set(proto.AttrNodeLastState, "", strconv.FormatInt(now.Unix(), 10))
				created = append(created, d.Name)
			case !d.Create && n != nil:
				c = n.Clone()
			default:
				continue
			}
			rt := s.nodes.RuntimeOf(d.Name)
			for k, v := range d.Attrs {
				c.Set(k, "", v)
				rt.Applied(k, v)
			}
			s.nodes.Put(c)
			b.PutNode(c)
		}
		if len(created) > 0 {
			for i := range st.Vnodes {
				s.nodes.ReportVnode(st, &st.Vnodes[i], now)
			}
		}
		return nil
	})
	if err != nil {
		s.log.Error("cannot record a mom's vnode definitions; the next report tries again", "mom", st.Node, "error", err)
		return false
	}
	for _, name := range created {
		s.log.Info("vnode created from its mom's definitions", "node", name, "mom", st.Node)
	}
	return len(created) > 0
}
