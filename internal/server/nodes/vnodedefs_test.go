package nodes

import (
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// What a mom's vnode definitions ask of the node table: vnodes to create
// (a refused name left out), attributes that differ from the stored ones
// and from what was last applied from the mom (a manager's change since
// stays), nothing for a node on another mom, and values refused.
func TestDefChanges(t *testing.T) {
	t.Parallel()
	v := view(t) // n1..n3, each its own mom
	other := model.NewNode("far", "elsewhere", "15002", "elsewhere")
	v.Nodes.Put(other)
	n1, _ := v.Nodes.Get("n1")
	c := n1.Clone()
	c.Set(proto.AttrNodeSharing, "", "force_shared") // by a manager, since the mom's
	v.Nodes.Put(c)
	v.Nodes.RuntimeOf("n1").Applied(proto.AttrNodeSharing, "default_shared")
	st := &proto.MomStatus{Node: "n1",
		NodeAttrs: map[string]string{proto.AttrNodeSharing: "default_shared", proto.AttrNodeResvEnable: "false"},
		Vnodes: []proto.VnodeStatus{
			{Name: "n1[0]", Attrs: map[string]string{proto.AttrNodeResvEnable: "t"}},
			{Name: "bad name!"},
			{Name: "far", Attrs: map[string]string{proto.AttrNodeSharing: "force_shared"}},
			{Name: "n1[1]", Attrs: map[string]string{proto.AttrNodeResvEnable: "maybe"}},
		},
	}
	defs, refused := v.DefChanges(st)
	byName := map[string]VnodeDef{}
	for _, d := range defs {
		byName[d.Name] = d
	}
	if d := byName["n1"]; d.Create || d.Attrs[proto.AttrNodeSharing] != "" || d.Attrs[proto.AttrNodeResvEnable] != "False" {
		t.Errorf("n1's own: %+v (the comment the manager changed since stays; resv_enable canonical)", d)
	}
	if d := byName["n1[0]"]; !d.Create || d.Attrs[proto.AttrNodeResvEnable] != "True" {
		t.Errorf("n1[0] created: %+v", d)
	}
	if d, ok := byName["n1[1]"]; !ok || !d.Create || len(d.Attrs) != 0 {
		t.Errorf("n1[1] created without its refused value: %+v", d)
	}
	if _, ok := byName["far"]; ok {
		t.Error("a node on another mom changed by n1's definitions")
	}
	if _, ok := byName["bad name!"]; ok || len(refused) != 2 || !strings.Contains(refused[0].Error()+refused[1].Error(), "bad name!") {
		t.Errorf("refused %v", refused)
	}
	// What is in place already is noted as applied, and asks for nothing.
	n2, _ := v.Nodes.Get("n2")
	c2 := n2.Clone()
	c2.Set(proto.AttrNodeSharing, "", "force_shared")
	v.Nodes.Put(c2)
	st2 := &proto.MomStatus{Node: "n2", NodeAttrs: map[string]string{proto.AttrNodeSharing: "force_shared"}}
	if defs, _ := v.DefChanges(st2); len(defs) != 0 || v.Nodes.Runtime("n2").FromMom[proto.AttrNodeSharing] != "force_shared" {
		t.Errorf("an attribute already as defined: %+v, noted %v", defs, v.Nodes.Runtime("n2").FromMom)
	}
}
