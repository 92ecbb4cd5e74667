package nodes

import (
	"fmt"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/vnodedef"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// VnodeDef is a change a mom's vnode definitions (pbs_mom -s, its
// mom_priv/config.d) ask of the node table: a vnode to create, or
// attributes to set.
type VnodeDef struct {
	Name   string
	Create bool
	Attrs  map[string]string
}

// DefChanges are the changes mom report st asks for that the stored nodes
// do not have yet, and the definitions refused (a vnode's name, an
// attribute's value: the mom checked them, but a report is still input).
// An attribute already in place is noted as applied from the mom
// (state.Runtime.Applied): the only change it makes.
func (v View) DefChanges(st *proto.MomStatus) (defs []VnodeDef, refused []error) {
	if ch := v.attrChanges(st.Node, st.NodeAttrs, &refused); len(ch) > 0 {
		defs = append(defs, VnodeDef{Name: st.Node, Attrs: ch})
	}
	for _, vn := range st.Vnodes {
		if _, ok := v.Nodes.Get(vn.Name); !ok {
			if err := model.CheckNodeName(vn.Name); err != nil {
				refused = append(refused, fmt.Errorf("vnode %q not created: %w", vn.Name, err))
				continue
			}
			defs = append(defs, VnodeDef{Name: vn.Name, Create: true, Attrs: checkedAttrs(vn.Name, vn.Attrs, &refused)})
			continue
		}
		if len(vn.Attrs) == 0 || !v.Nodes.OnMom(vn.Name, st.Node) {
			continue
		}
		if ch := v.attrChanges(vn.Name, vn.Attrs, &refused); len(ch) > 0 {
			defs = append(defs, VnodeDef{Name: vn.Name, Attrs: ch})
		}
	}
	return defs, refused
}

// attrChanges are the attributes of node name a definition sets to a new
// value: one that differs from the stored value and from what was last
// applied from the mom (a manager's change since stays until the
// definition changes).
func (v View) attrChanges(name string, want map[string]string, refused *[]error) map[string]string {
	n, _ := v.Nodes.Get(name)
	if n == nil || len(want) == 0 {
		return nil
	}
	rt := v.Nodes.RuntimeOf(name)
	var out map[string]string
	for k, val := range checkedAttrs(name, want, refused) {
		cur, _ := n.Get(k)
		switch {
		case cur == val:
			rt.Applied(k, val)
		case rt.FromMom[k] != val:
			if out == nil {
				out = map[string]string{}
			}
			out[k] = val
		}
	}
	return out
}

// checkedAttrs keeps the reported attributes whose values are acceptable,
// canonical.
func checkedAttrs(name string, attrs map[string]string, refused *[]error) map[string]string {
	out := make(map[string]string, len(attrs))
	for k, val := range attrs {
		if err := vnodedef.CheckAttr(k, val); err != nil {
			*refused = append(*refused, fmt.Errorf("node %s: %w", name, err))
			continue
		}
		if k == proto.AttrNodeResvEnable {
			b, _ := resc.ParseBool(val) // checked above
			val = resc.FormatBool(b)
		}
		out[k] = val
	}
	return out
}
