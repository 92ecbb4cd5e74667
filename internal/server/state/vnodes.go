package state

import (
	"time"

	"github.com/gopbs/gopbs/proto"
)

// Vnodes: a mom may report further nodes beside its own (OpenPBS's
// vnodes, defined in its mom_priv/config.d, or a simulator's). Each is a
// node of its own for placement and state; exec_host names the mom's node
// (MomOf), exec_vnode the vnodes.

// OnMom reports whether node name is on the mom of node mom: the same Mom
// host and Port.
func (t *Nodes) OnMom(name, mom string) bool {
	n, ok := t.byName[name]
	owner, ok2 := t.byName[mom]
	if !ok || !ok2 {
		return false
	}
	m1, _ := n.Get(proto.AttrNodeMom)
	m2, _ := owner.Get(proto.AttrNodeMom)
	p1, _ := n.Get(proto.AttrNodePort)
	p2, _ := owner.Get(proto.AttrNodePort)
	return m1 == m2 && p1 == p2
}

// ReportVnodes records the further nodes mom report st speaks for at now:
// a vnode must be on the reporting node's mom (OnMom), so a mom speaks
// only for nodes placed on it. A vnode the mom reported before and no
// longer does is stale, as in OpenPBS: it takes no new jobs until it is
// reported again or deleted. It returns the vnodes recorded and those
// that went stale.
func (t *Nodes) ReportVnodes(st *proto.MomStatus, now time.Time) (recorded, stale []string) {
	reported := make(map[string]bool, len(st.Vnodes))
	for i := range st.Vnodes {
		v := &st.Vnodes[i]
		reported[v.Name] = true
		if t.ReportVnode(st, v, now) {
			recorded = append(recorded, v.Name)
		}
	}
	owner := t.RuntimeOf(st.Node)
	for name := range owner.Vnodes {
		rt := t.runtime[name]
		if name != st.Node && !reported[name] && rt != nil && rt.Owner == st.Node && !rt.Stale {
			rt.Stale, rt.Down, rt.DownSince, rt.LastChange = true, true, now, now
			stale = append(stale, name)
		}
	}
	if len(reported) > 0 || len(owner.Vnodes) > 0 {
		owner.Vnodes = reported
	}
	return recorded, stale
}

// ReportVnode records one vnode's status from its mom's report st at now,
// when the node exists on the reporting mom; it reports whether it did.
func (t *Nodes) ReportVnode(st *proto.MomStatus, v *proto.VnodeStatus, now time.Time) bool {
	if !t.OnMom(v.Name, st.Node) {
		return false
	}
	rt := t.RuntimeOf(v.Name)
	if !rt.Reported || rt.Down {
		rt.LastChange = now
	}
	owner := t.RuntimeOf(st.Node)
	rt.Down, rt.Stale, rt.LastSeen, rt.Told, rt.LeaseEnd = false, false, now, owner.Told, owner.LeaseEnd
	rt.Owner = st.Node
	t.Report(v.Name, proto.MomStatus{Node: v.Name, Version: st.Version, Port: st.Port, Arch: st.Arch, Ncpus: v.Ncpus,
		Physmem: v.Physmem, Loadave: 0, IdealLoad: -1, MaxLoad: -1, Resources: v.Resources})
	return true
}
