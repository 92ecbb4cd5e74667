package qmgrparse

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/proto"
)

// ctimeLayout is ctime(3) without the newline.
const ctimeLayout = "Mon Jan _2 15:04:05 2006"

// listLimit is the column list wraps comma lists before, as PBS does.
const listLimit = 80

func header(obj proto.ObjectType) string {
	switch obj {
	case proto.ObjServer:
		return "Server"
	case proto.ObjQueue:
		return "Queue"
	case proto.ObjNode:
		return "Node"
	case proto.ObjResource:
		return "Resource"
	case proto.ObjSched:
		return "Sched"
	case proto.ObjHook:
		return "Hook"
	}
	return obj.String()
}

// FormatList renders objs, all of type obj, as qmgr's list command: a
// header line, one "    attr = value" line per attribute and a blank line.
// Attributes that hold Unix seconds are shown as ctime(3) strings in loc.
func FormatList(obj proto.ObjectType, objs []proto.Status, loc *time.Location) string {
	var b strings.Builder
	for _, o := range objs {
		b.WriteString(header(obj) + " " + o.Name + "\n")
		for _, a := range o.Attrs {
			writeListAttr(&b, obj, a, loc)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// writeListAttr writes one attribute, breaking a comma list before an
// element that would reach listLimit and indenting the rest under the
// value, so that long managers or acl lists stay readable.
func writeListAttr(b *strings.Builder, obj proto.ObjectType, a proto.Attr, loc *time.Location) {
	name := a.FullName()
	value := a.Value
	if IsTimeAttr(obj, a.Name) {
		if secs, err := strconv.ParseInt(value, 10, 64); err == nil {
			value = time.Unix(secs, 0).In(loc).Format(ctimeLayout)
		}
	}
	b.WriteString("    " + name + " = ")
	indent := 4 + len(name) + 3
	col := indent
	for i, elem := range strings.Split(value, ",") {
		if i > 0 {
			b.WriteByte(',')
			col++
			if col+len(elem) >= listLimit {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
				elem = strings.TrimLeft(elem, " \t")
			}
		}
		b.WriteString(elem)
		col += len(elem)
	}
	b.WriteByte('\n')
}

// FormatPrint renders objs, all of type obj, as qmgr input that recreates
// them: a section header, then per queue or node a "create" line and per
// settable attribute a "set" line; for the server only "set" lines. An
// empty objs renders nothing, not even the header.
func FormatPrint(obj proto.ObjectType, objs []proto.Status) string {
	if len(objs) == 0 {
		return ""
	}
	var b strings.Builder
	switch obj {
	case proto.ObjServer:
		b.WriteString("#\n# Set server attributes.\n#\n")
	case proto.ObjQueue:
		b.WriteString("#\n# Create queues and set their attributes.\n#\n")
	case proto.ObjNode:
		b.WriteString("#\n# Create nodes and set their properties.\n#\n")
	case proto.ObjResource:
		b.WriteString("#\n# Create resources and set their properties.\n#\n")
	case proto.ObjSched:
		// OpenPBS writes "create sched default" here, which its own
		// server refuses on replay (the scheduler exists): the set lines
		// alone recreate it.
		b.WriteString("#\n# Set scheduler attributes.\n#\n")
	case proto.ObjHook:
		b.WriteString("#\n# Create hooks and set their properties.\n#\n")
	}
	for _, o := range objs {
		prefix := "set " + obj.String() + " "
		switch obj {
		case proto.ObjQueue:
			b.WriteString("#\n# Create and define queue " + o.Name + "\n#\n")
			b.WriteString("create queue " + o.Name + "\n")
			prefix += o.Name + " "
		case proto.ObjNode:
			b.WriteString("#\n# Create and define node " + o.Name + "\n#\n")
			b.WriteString(createNode(o) + "\n")
			prefix += o.Name + " "
		case proto.ObjResource:
			b.WriteString("#\n# Create and define resource " + o.Name + "\n#\n")
			b.WriteString("create resource " + o.Name + "\n")
			prefix += o.Name + " "
		case proto.ObjSched:
			// The default scheduler goes unnamed, as OpenPBS prints it.
			if o.Name != proto.DefaultSched {
				prefix += o.Name + " "
			}
		case proto.ObjHook:
			b.WriteString("#\n# Create and define hook " + o.Name + "\n#\n")
			b.WriteString("create hook " + o.Name + "\n")
			prefix += o.Name + " "
		}
		for _, a := range o.Attrs {
			writeSet(&b, obj, prefix, a)
		}
		if obj == proto.ObjHook {
			writeHookImports(&b, o)
		}
	}
	return b.String()
}

// writeHookImports writes what recreates a hook's script and
// configuration file, as OpenPBS's print does: an import reading base64
// from the lines after it, up to a blank line (qmgr's reading of "-" from
// its command input). The status must carry the content
// (proto.AttrHookContent); a file never imported is left out.
func writeHookImports(b *strings.Builder, o proto.Status) {
	for _, f := range []struct{ attr, ctype string }{
		{proto.AttrHookContent, hook.ContentPython},
		{proto.AttrHookConfig, hook.ContentConfig},
	} {
		v, ok := o.Get(f.attr)
		if !ok || v == "" {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(data) == 0 {
			continue
		}
		b.WriteString("import hook " + o.Name + " " + f.ctype + " " + hook.EncBase64 + " -\n")
		b.WriteString(Base64Lines(data))
		b.WriteByte('\n')
	}
}

// base64Line is how many characters of base64 one line holds (MIME's).
const base64Line = 76

// Base64Lines is data in base64, in lines of base64Line characters, each
// ended by a newline: how print and export write a hook's file.
func Base64Lines(data []byte) string {
	enc := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	for len(enc) > 0 {
		n := min(len(enc), base64Line)
		b.WriteString(enc[:n] + "\n")
		enc = enc[n:]
	}
	return b.String()
}

// FormatPrintServer renders what "print server" shows: the custom
// resources first (as OpenPBS writes them: queues, nodes and the server
// may set them, so a replay defines them before), the queues, then the
// server's attributes, then the nodes, each section as FormatPrint.
func FormatPrintServer(server proto.Status, resources, queues, nodes []proto.Status) string {
	return FormatPrint(proto.ObjResource, resources) +
		FormatPrint(proto.ObjQueue, queues) +
		FormatPrint(proto.ObjServer, []proto.Status{server}) +
		FormatPrint(proto.ObjNode, nodes)
}

// createNode is the "create node" line: Mom and Port ride on it when they
// differ from the node name and the standard mom port, because the server
// needs them to create the node at all.
func createNode(o proto.Status) string {
	line := "create node " + o.Name
	var extra []string
	if mom, ok := o.Get(proto.AttrNodeMom); ok && mom != "" && mom != o.Name {
		extra = append(extra, proto.AttrNodeMom+"="+Quote(mom))
	}
	if port, ok := o.Get(proto.AttrNodePort); ok && port != "" && port != strconv.Itoa(config.DefaultMomPort) {
		extra = append(extra, proto.AttrNodePort+"="+Quote(port))
	}
	if extra != nil {
		line += " " + strings.Join(extra, ",")
	}
	return line
}

func writeSet(b *strings.Builder, obj proto.ObjectType, prefix string, a proto.Attr) {
	if ReadOnly(obj, a.Name) {
		return
	}
	value := a.Value
	if obj == proto.ObjNode {
		switch a.Name {
		case proto.AttrNodeMom, proto.AttrNodePort:
			return
		case proto.AttrNodeState:
			// Only offline is a state a manager sets; the others are
			// the server's view of the mom.
			if !hasElem(value, "offline") {
				return
			}
			value = "offline"
		}
	}
	line := prefix + a.FullName()
	if !isListAttr(obj, a.Name) || value == "" {
		b.WriteString(line + " = " + Quote(value) + "\n")
		return
	}
	for i, elem := range strings.Split(value, ",") {
		op := " += "
		if i == 0 {
			op = " = "
		}
		b.WriteString(line + op + Quote(elem) + "\n")
	}
}

func hasElem(list, elem string) bool {
	for _, e := range strings.Split(list, ",") {
		if strings.TrimSpace(e) == elem {
			return true
		}
	}
	return false
}
