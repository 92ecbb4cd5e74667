package qmgrparse

import (
	"reflect"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// tableCase is a command and what it parses to.
type tableCase struct {
	text  string
	names []ObjName
	attrs []proto.Attr
}

// tableCases are the commands TestEveryTableAttributeParses runs for
// attribute d of obj, whose objects are named name.
func tableCases(obj proto.ObjectType, name string, d model.Def) []tableCase {
	full, res := d.Name, ""
	if d.Kind == model.KindResources {
		full, res = d.Name+".ncpus", "ncpus"
	}
	value := "5"
	if d.Kind == model.KindList {
		value = "a@h1,b@h2"
	}
	o := obj.String()
	setA := []proto.Attr{{Name: d.Name, Resource: res, Value: value, Op: proto.OpSet}}
	unsetA := []proto.Attr{{Name: d.Name, Resource: res, Op: proto.OpUnset}}
	cases := []tableCase{
		{"set " + o + " " + full + " = " + value, nil, setA},
		{"unset " + o + " " + full, nil, unsetA},
		{"list " + o + " " + full, nil, []proto.Attr{{Name: d.Name, Resource: res}}},
	}
	if obj != proto.ObjServer {
		cases = append(cases,
			tableCase{"set " + o + " " + name + " " + full + "=" + value, names(name), setA},
			tableCase{"unset " + o + " " + name + " " + full, names(name), unsetA},
			tableCase{"list " + o + " " + name + " " + full, names(name), []proto.Attr{{Name: d.Name, Resource: res}}})
	}
	if d.Kind == model.KindList {
		cases = append(cases,
			tableCase{"set " + o + " " + full + " = a@h1, b@h2,c@h3, comment = x", nil, []proto.Attr{
				{Name: d.Name, Value: "a@h1,b@h2,c@h3", Op: proto.OpSet},
				{Name: proto.AttrComment, Value: "x", Op: proto.OpSet}}},
			tableCase{"set " + o + " " + full + " += /a/b,/c,scheduling=1", nil, []proto.Attr{
				{Name: d.Name, Value: "/a/b,/c", Op: proto.OpIncr},
				{Name: proto.AttrScheduling, Value: "1", Op: proto.OpSet}}},
			tableCase{"unset " + o + " " + full + ", comment", nil, append(unsetA, proto.Attr{Name: proto.AttrComment, Op: proto.OpUnset})})
	}
	return cases
}

// Every attribute of the server's tables parses in set, unset and list,
// with and without an object name, and a list attribute takes a comma
// list without quotes, as OpenPBS's qmgr does: the grammar knows the
// attributes from the server's table (issue 20: "unset server
// submission_filters" was a syntax error because the parser had a list
// of names of its own that lacked it; issue 19: "set server managers =
// root@vm,alice@vm" was one too).
func TestEveryTableAttributeParses(t *testing.T) {
	t.Parallel()
	for _, obj := range []proto.ObjectType{proto.ObjServer, proto.ObjQueue, proto.ObjNode, proto.ObjSched} {
		name := "x1"
		if obj == proto.ObjSched {
			name = proto.DefaultSched
		}
		for _, d := range model.Defs(obj).Defs {
			for _, c := range tableCases(obj, name, d) {
				cmd := parseNames(t, c.text, c.names)
				if cmd == nil {
					continue
				}
				if !reflect.DeepEqual(cmd.Attrs, c.attrs) {
					t.Errorf("Parse(%q).Attrs = %+v, want %+v", c.text, cmd.Attrs, c.attrs)
				}
				// The canonical form of the command reads back the same.
				again, err := Parse(cmd.String())
				if err != nil || !reflect.DeepEqual(again.Attrs, cmd.Attrs) || !reflect.DeepEqual(again.Names, cmd.Names) {
					t.Errorf("Parse(%q) = %q, which reads back as %+v, %v", c.text, cmd.String(), again, err)
				}
			}
		}
	}
}

// A comma ends a list value where the command cannot go on with one
// more element.
func TestListValueEnds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ text, want string }{
		{"set server managers = a@h,", "qmgr: Syntax error - cannot locate attribute\nset server managers = a@h,\n                          ^"},
		{"set server managers = a@h,,b@h", "qmgr: Syntax error - cannot locate attribute\nset server managers = a@h,,b@h\n                          ^"},
		{"set server comment = a,b", "qmgr: Syntax error - operator and value required for attribute\nset server comment = a,b\n                        ^"},
	} {
		_, err := Parse(tt.text)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q) error\n%v\nwant\n%s", tt.text, err, tt.want)
		}
	}
}

// The names qmgr takes for OpenPBS's attributes that this system lacks
// are not attributes of the server's tables: those are known there only.
func TestOtherPBSAttrsAreNotOurs(t *testing.T) {
	t.Parallel()
	for _, obj := range []proto.ObjectType{proto.ObjServer, proto.ObjQueue, proto.ObjNode, proto.ObjSched} {
		for _, n := range otherPBSAttrs(obj) {
			if _, ok := model.Defs(obj).LookupFold(n); ok {
				t.Errorf("%s attribute %s is in the server's table and in otherPBSAttrs", obj, n)
			}
		}
	}
}
