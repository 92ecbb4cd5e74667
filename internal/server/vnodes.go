package server

import (
	"strconv"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/internal/vnodedef"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Vnodes: a mom may report further nodes beside its own (OpenPBS's vnodes,
// defined in its mom_priv/config.d, or a simulator's). Each is a node of
// its own for placement and state; exec_host names the mom's node
// (momNode), exec_vnode the vnodes.

// vnodeStatus records the further nodes a mom reports for; a vnode must
// name the reporting node's Mom host and Port, so a mom speaks only for
// nodes placed on it (an admin's, or those its reports made:
// applyVnodeDefs).
// A vnode the mom reported before and no longer does is stale, as in
// OpenPBS: it takes no new jobs until it is reported again or deleted
// (mu held). It returns the vnodes recorded.
func (s *Server) vnodeStatus(st *proto.MomStatus, now time.Time) []string {
	var recorded []string
	reported := make(map[string]bool, len(st.Vnodes))
	for i := range st.Vnodes {
		v := &st.Vnodes[i]
		reported[v.Name] = true
		if s.recordVnode(st, v, now) {
			recorded = append(recorded, v.Name)
		}
	}
	owner := s.nodes.RuntimeOf(st.Node)
	for name := range owner.Vnodes {
		rt := s.nodes.Runtime(name)
		if name != st.Node && !reported[name] && rt != nil && rt.Owner == st.Node && !rt.Stale {
			rt.Stale, rt.Down, rt.DownSince, rt.LastChange = true, true, now, now
			s.log.Warn("vnode stale: its mom no longer reports it", "node", name, "mom", st.Node)
		}
	}
	if len(reported) > 0 || len(owner.Vnodes) > 0 {
		owner.Vnodes = reported
	}
	return recorded
}

// recordVnode records one reported vnode's status when the node exists
// on the reporting mom (mu held).
func (s *Server) recordVnode(st *proto.MomStatus, v *proto.VnodeStatus, now time.Time) bool {
	if !s.onMom(v.Name, st.Node) {
		return false
	}
	rt := s.nodes.RuntimeOf(v.Name)
	if !rt.Reported || rt.Down {
		rt.LastChange = now
	}
	owner := s.nodes.Runtime(st.Node)
	rt.Down, rt.Stale, rt.LastSeen, rt.Told, rt.LeaseEnd = false, false, now, owner.Told, owner.LeaseEnd
	rt.Owner = st.Node
	s.nodes.Report(v.Name, proto.MomStatus{Node: v.Name, Version: st.Version, Port: st.Port, Arch: st.Arch, Ncpus: v.Ncpus,
		Physmem: v.Physmem, Loadave: 0, IdealLoad: -1, MaxLoad: -1, Resources: v.Resources})
	return true
}

// onMom reports whether node name is on the mom of node mom: the same Mom
// host and Port (mu held).
func (s *Server) onMom(name, mom string) bool {
	n, ok := s.nodes.Get(name)
	owner, ok2 := s.nodes.Get(mom)
	if !ok || !ok2 {
		return false
	}
	m1, _ := n.Get(proto.AttrNodeMom)
	m2, _ := owner.Get(proto.AttrNodeMom)
	p1, _ := n.Get(proto.AttrNodePort)
	p2, _ := owner.Get(proto.AttrNodePort)
	return m1 == m2 && p1 == p2
}

// momNode is the node whose mom runs jobs for node name: the reporting
// node of a vnode, else the node itself (mu held). exec_host names it, as
// OpenPBS's names the mom's host, so that a job's first mom, its sisters
// and its nodefile are hosts and not vnodes.
func (s *Server) momNode(name string) string {
	if rt := s.nodes.Runtime(name); rt != nil && rt.Owner != "" {
		return rt.Owner
	}
	return name
}

// vnodeDef is a change a mom's vnode definitions ask of the server: a
// vnode to create, or attributes to set.
type vnodeDef struct {
	name   string
	create bool
	attrs  map[string]string
}

// vnodeDefChanges are the changes a report asks for that the stored nodes
// do not have yet (mu held, for writing: it notes the attributes already
// in place as applied).
func (s *Server) vnodeDefChanges(st *proto.MomStatus) []vnodeDef {
	var out []vnodeDef
	if ch := s.attrChanges(st.Node, st.Node, st.NodeAttrs); len(ch) > 0 {
		out = append(out, vnodeDef{name: st.Node, attrs: ch})
	}
	for _, v := range st.Vnodes {
		if _, ok := s.nodes.Get(v.Name); !ok {
			if err := model.CheckNodeName(v.Name); err != nil {
				s.log.Warn("vnode not created: its name is refused", "mom", st.Node, "error", err)
				continue
			}
			out = append(out, vnodeDef{name: v.Name, create: true, attrs: s.checkedAttrs(st.Node, v.Name, v.Attrs)})
			continue
		}
		if len(v.Attrs) == 0 || !s.onMom(v.Name, st.Node) {
			continue
		}
		if ch := s.attrChanges(st.Node, v.Name, v.Attrs); len(ch) > 0 {
			out = append(out, vnodeDef{name: v.Name, attrs: ch})
		}
	}
	return out
}

// attrChanges are the attributes of node name a definition sets to a new
// value: one that differs from the stored value and from what was last
// applied from the mom (a manager's change since stays until the
// definition changes). mu held for writing.
func (s *Server) attrChanges(mom, name string, want map[string]string) map[string]string {
	n, _ := s.nodes.Get(name)
	if n == nil || len(want) == 0 {
		return nil
	}
	rt := s.nodes.RuntimeOf(name)
	var out map[string]string
	for k, v := range s.checkedAttrs(mom, name, want) {
		cur, _ := n.Get(k)
		switch {
		case cur == v:
			rt.Applied(k, v)
		case rt.FromMom[k] != v:
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// checkedAttrs keeps the reported attributes whose values are acceptable
// (the mom checked them; a report is still input).
func (s *Server) checkedAttrs(mom, name string, attrs map[string]string) map[string]string {
	out := make(map[string]string, len(attrs))
	for k, v := range attrs {
		if err := vnodedef.CheckAttr(k, v); err != nil {
			s.log.Warn("vnode attribute refused", "mom", mom, "node", name, "error", err)
			continue
		}
		if k == proto.AttrNodeResvEnable {
			b, _ := resc.ParseBool(v) // checked above
			v = resc.FormatBool(b)
		}
		out[k] = v
	}
	return out
}

// applyVnodeDefs makes a report's vnode changes durable, creating vnodes
// on the reporting mom (its Mom and Port, its host) and recording their
// status at once; it reports whether it created one.
func (s *Server) applyVnodeDefs(st *proto.MomStatus, defs []vnodeDef) bool {
	var created []string
	err := s.commit.Do(func(b *store.Batch) error {
		created = created[:0]
		owner, _ := s.nodes.Get(st.Node)
		if owner == nil {
			return nil // deleted meanwhile
		}
		now := s.now()
		for _, d := range defs {
			n, _ := s.nodes.Get(d.name)
			var c *model.Object
			switch {
			case d.create && n == nil:
				mom, _ := owner.Get(proto.AttrNodeMom)
				port, _ := owner.Get(proto.AttrNodePort)
				c = model.NewNode(d.name, mom, port, s.hostOf(st.Node))
				c.Set(proto.AttrNodeLastState, "", strconv.FormatInt(now.Unix(), 10))
				created = append(created, d.name)
			case !d.create && n != nil:
				c = n.Clone()
			default:
				continue
			}
			rt := s.nodes.RuntimeOf(d.name)
			for k, v := range d.attrs {
				c.Set(k, "", v)
				rt.Applied(k, v)
			}
			s.nodes.Put(c)
			b.PutNode(c)
		}
		if len(created) > 0 {
			for i := range st.Vnodes {
				s.recordVnode(st, &st.Vnodes[i], now)
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
