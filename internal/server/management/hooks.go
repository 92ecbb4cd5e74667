package management

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// HookStore is what hook management needs of the server.
type HookStore interface {
	// Commit runs change in the next commit group, with the server's
	// state locked for writing (see Store).
	Commit(change func(b *store.Batch) error) error
	// View runs read with the server's state locked for reading.
	View(read func())
	// HookTable is the server's hooks (state locked).
	HookTable() *state.Hooks
}

// Hooks handles qmgr's site hooks: create, set, unset, import, delete,
// and their status (list, print, export).
type Hooks struct {
	st HookStore
	// raised are the events the daemons run hooks at: a hook set for
	// another is refused, never stored to be silently not run.
	raised hook.Events
}

// NewHooks makes the handler over st for hooks of the raised events.
func NewHooks(st HookStore, raised hook.Events) *Hooks { return &Hooks{st: st, raised: raised} }

// Import is an import hook request read: what is imported and where it
// goes. ParseImport makes it; the caller checks a script compiles (that
// runs Python, outside any lock) before Manage stores it.
type Import struct {
	Config bool   // application/x-config, not the script
	Data   []byte // the file's content, decoded
	Suffix string // a configuration file's suffix
}

// ParseImport reads an MgrImport's attributes.
func ParseImport(req *proto.ManagerRequest) (Import, error) {
	var im Import
	var ctype, enc, content, file string
	for _, a := range req.Attrs {
		switch a.Name {
		case proto.AttrContentType:
			ctype = a.Value
		case proto.AttrContentEncoding:
			enc = a.Value
		case proto.AttrHookContent:
			content = a.Value
		case proto.AttrInputFile:
			file = a.Value
		default:
			return im, proto.Errorf(proto.PBSE_IVALREQ, "import hook: unexpected %s", a.Name)
		}
	}
	switch ctype {
	case hook.ContentPython:
	case hook.ContentConfig:
		im.Config = true
		im.Suffix = filepath.Ext(file)
		if err := hook.CheckConfigSuffix(im.Suffix); err != nil {
			return im, err
		}
	default:
		return im, proto.Errorf(proto.PBSE_BADATVAL, "import hook %s: content-type %q (want %s or %s)", req.Name, ctype, hook.ContentPython, hook.ContentConfig)
	}
	if enc != hook.EncBase64 && enc != hook.EncDefault {
		return im, proto.Errorf(proto.PBSE_BADATVAL, "import hook %s: content-encoding %q (want %s or %s)", req.Name, enc, hook.EncDefault, hook.EncBase64)
	}
	data, err := base64.StdEncoding.DecodeString(content)
	if err != nil {
		return im, proto.Errorf(proto.PBSE_BADATVAL, "import hook %s: the content is not base64: %v", req.Name, err)
	}
	if len(data) > hook.MaxContent {
		return im, proto.Errorf(proto.PBSE_BADATVAL, "import hook %s: %d bytes, more than the %d a hook's file may hold", req.Name, len(data), hook.MaxContent)
	}
	im.Data = data
	return im, nil
}

// Manage applies a create, set, unset, delete or import (im, read by
// ParseImport and checked by the caller) to the hook req names;
// managers only (mgr), as OpenPBS has it.
func (h *Hooks) Manage(req *proto.ManagerRequest, mgr bool, im Import) error {
	if !mgr {
		return proto.Errorf(proto.PBSE_PERM, "hooks are managed by managers only")
	}
	return h.st.Commit(func(b *store.Batch) error {
		t := h.st.HookTable()
		cur, exists := t.Get(req.Name)
		switch {
		case req.Command == proto.MgrCreate && exists:
			return proto.Errorf(proto.PBSE_DUPLIST, "(hook %s exists)", req.Name)
		case req.Command != proto.MgrCreate && !exists:
			return proto.Errorf(proto.PBSE_IVAL_OBJ_NAME, "hook %s does not exist", req.Name)
		}
		var next *hook.Hook
		switch req.Command {
		case proto.MgrDelete:
			t.Delete(req.Name)
			b.DeleteHook(req.Name)
			return nil
		case proto.MgrCreate:
			var err error
			if next, err = hook.New(req.Name); err != nil {
				return err
			}
		default:
			next = cur.Clone()
		}
		if req.Command == proto.MgrImport {
			if im.Config {
				next.Config, next.ConfigSuffix = im.Data, im.Suffix
			} else {
				next.Script = im.Data
			}
		} else {
			for _, a := range req.Attrs {
				if req.Command == proto.MgrUnset {
					a.Op = proto.OpUnset
				}
				if err := next.Set(a); err != nil {
					return err
				}
			}
			if extra := next.Events &^ h.raised; extra != 0 {
				return &proto.Error{Code: proto.PBSE_HOOKERROR, Text: "event " + extra.String() +
					" is not supported yet: a hook of it would never run (the events run here are " + h.raised.String() + ")"}
			}
		}
		t.Put(next)
		b.PutHook(next)
		return nil
	})
}

// Status lists the hooks req names, or all, with their attributes in
// qmgr's order; their content too when req asks for AttrHookContent
// (print hook, export hook). Managers only (mgr).
func (h *Hooks) Status(req *proto.StatusRequest, mgr bool) (*proto.StatusReply, error) {
	if !mgr {
		return nil, proto.Errorf(proto.PBSE_PERM, "hooks are seen by managers only")
	}
	reply := &proto.StatusReply{}
	content := false
	var want map[string]bool // the attributes asked for; nil: all
	for _, a := range req.Attrs {
		if a == proto.AttrHookContent {
			content = true
			continue
		}
		if want == nil {
			want = map[string]bool{}
		}
		want[strings.ToLower(a)] = true
	}
	render := func(x *hook.Hook) {
		attrs := x.Attrs()
		if want != nil {
			attrs = slices.DeleteFunc(attrs, func(a proto.Attr) bool { return !want[a.Name] })
		}
		if content {
			attrs = append(attrs,
				proto.Attr{Name: proto.AttrHookContent, Value: base64.StdEncoding.EncodeToString(x.Script)},
				proto.Attr{Name: proto.AttrHookConfig, Value: base64.StdEncoding.EncodeToString(x.Config)},
				proto.Attr{Name: proto.AttrHookConfigSuffix, Value: x.ConfigSuffix})
		}
		reply.Objects = append(reply.Objects, proto.Status{Name: x.Name, Attrs: attrs})
	}
	h.st.View(func() {
		t := h.st.HookTable()
		if len(req.IDs) == 0 {
			for _, x := range t.List() {
				render(x)
			}
			return
		}
		for _, raw := range req.IDs {
			name, _, _ := strings.Cut(strings.TrimSpace(raw), "@")
			if x, ok := t.Get(name); ok {
				render(x)
				continue
			}
			reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_IVAL_OBJ_NAME, Text: "hook " + name + " does not exist"})
		}
	})
	return reply, nil
}
