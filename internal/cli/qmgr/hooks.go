package qmgr

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/qmgrparse"
	"github.com/gopbs/gopbs/proto"
)

// Import and export of a hook's files, as OpenPBS's qmgr has them: qmgr
// reads and writes the file (it is the admin's, on the admin's host) and
// the server gets and gives the content itself.

// importHook is "import hook NAME content-type content-encoding FILE":
// the file ("-": the standard input) is read, decoded when it is base64,
// and sent; the server checks that it compiles.
func (s *session) importHook(cmd *qmgrparse.Command) int {
	name, c := cmd.Names[0], cmd.Content
	label, svr := s.label(cmd.Object, name), s.svr(cmd.Object, name)
	var data []byte
	var err error
	if c.File == "-" {
		data, err = s.stdinFile()
	} else {
		data, err = os.ReadFile(c.File)
	}
	if err != nil {
		fmt.Fprintf(s.errw, "qmgr: import hook %s: %v\n", name.Name, err)
		return exitExec
	}
	if c.Encoding == hook.EncBase64 {
		if data, err = decodeBase64(data); err != nil {
			fmt.Fprintf(s.errw, "qmgr: import hook %s: %s is not base64: %v\n", name.Name, c.File, err)
			return exitExec
		}
	}
	req := &proto.ManagerRequest{Command: proto.MgrImport, Object: proto.ObjHook, Name: name.Name, Attrs: []proto.Attr{
		{Name: proto.AttrContentType, Value: c.Type},
		{Name: proto.AttrContentEncoding, Value: c.Encoding},
		{Name: proto.AttrInputFile, Value: c.File},
		{Name: proto.AttrHookContent, Value: base64.StdEncoding.EncodeToString(data)},
	}}
	if err := s.srv.Manager(req); err != nil {
		s.serverError(label, svr, err)
		return exitExec
	}
	return 0
}

// exportHook is "export hook NAME content-type content-encoding [FILE]":
// the hook's script or configuration file, written to FILE or the
// standard output, in base64 when asked.
func (s *session) exportHook(cmd *qmgrparse.Command) int {
	name, c := cmd.Names[0], cmd.Content
	attr := proto.AttrHookContent
	switch c.Type {
	case hook.ContentPython:
	case hook.ContentConfig:
		attr = proto.AttrHookConfig
	default:
		fmt.Fprintf(s.errw, "qmgr: export hook %s: content-type %q (want %s or %s)\n", name.Name, c.Type, hook.ContentPython, hook.ContentConfig)
		return exitExec
	}
	if c.Encoding != hook.EncDefault && c.Encoding != hook.EncBase64 {
		fmt.Fprintf(s.errw, "qmgr: export hook %s: content-encoding %q (want %s or %s)\n", name.Name, c.Encoding, hook.EncDefault, hook.EncBase64)
		return exitExec
	}
	objs, code := s.stat(proto.ObjHook, name, []string{proto.AttrHookContent})
	if code != 0 || len(objs) == 0 {
		return exitExec
	}
	v, _ := objs[0].Get(attr)
	data, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		fmt.Fprintf(s.errw, "qmgr: export hook %s: the server sent content that is not base64: %v\n", name.Name, err)
		return exitExec
	}
	if c.Encoding == hook.EncBase64 {
		data = []byte(qmgrparse.Base64Lines(data))
	}
	if c.File == "" || c.File == "-" {
		if _, err := s.out.Write(data); err != nil {
			fmt.Fprintf(s.errw, "qmgr: export hook %s: %v\n", name.Name, err)
			return exitExec
		}
		return 0
	}
	if err := os.WriteFile(c.File, data, 0o644); err != nil {
		fmt.Fprintf(s.errw, "qmgr: export hook %s: %v\n", name.Name, err)
		return exitExec
	}
	return 0
}

// decodeBase64 reads base64 written in lines (white space is ignored).
func decodeBase64(data []byte) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, string(data))
	return base64.StdEncoding.DecodeString(clean)
}
