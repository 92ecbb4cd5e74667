package qmgr

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

const hookScript = "import pbs\ne = pbs.event()\ne.accept()\n"

func hookFake() *fake {
	f := newFake()
	f.hooks = []proto.Status{{Name: "h1", Attrs: []proto.Attr{
		{Name: "type", Value: "site"}, {Name: "enabled", Value: "true"},
		{Name: "event", Value: "queuejob,modifyjob"}, {Name: "alarm", Value: "30"},
		{Name: proto.AttrHookContent, Value: base64.StdEncoding.EncodeToString([]byte(hookScript))},
		{Name: proto.AttrHookConfig, Value: base64.StdEncoding.EncodeToString([]byte(`{"a": 1}`))},
	}}}
	return f
}

// importOf is the import request qmgr sends for data.
func importOf(name, ctype, enc, file, data string) proto.ManagerRequest {
	return proto.ManagerRequest{Command: proto.MgrImport, Object: proto.ObjHook, Name: name, Attrs: []proto.Attr{
		{Name: proto.AttrContentType, Value: ctype},
		{Name: proto.AttrContentEncoding, Value: enc},
		{Name: proto.AttrInputFile, Value: file},
		{Name: proto.AttrHookContent, Value: base64.StdEncoding.EncodeToString([]byte(data))},
	}}
}

// import reads the file on qmgr's side, plain or base64, from a path or
// the standard input, and sends its content.
func TestImportHook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "h1.py")
	os.WriteFile(plain, []byte(hookScript), 0o644)
	b64 := filepath.Join(dir, "h1.b64")
	os.WriteFile(b64, []byte(base64.StdEncoding.EncodeToString([]byte(hookScript))[:20]+"\n"+base64.StdEncoding.EncodeToString([]byte(hookScript))[20:]+"\n"), 0o644)

	f := newFake()
	r := run1(t, f, "-c", "import hook h1 application/x-python default "+plain+"; import hook h1 application/x-python base64 "+b64)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("got %+v", r)
	}
	want := []proto.ManagerRequest{
		importOf("h1", "application/x-python", "default", plain, hookScript),
		importOf("h1", "application/x-python", "base64", b64, hookScript),
	}
	if !reflect.DeepEqual(f.requests, want) {
		t.Errorf("requests\n%+v\nwant\n%+v", f.requests, want)
	}

	// -c with "-": the file is the whole standard input.
	f = newFake()
	r = runFake(t, f, config.PBSPro, hookScript, false, "-c", "import hook h1 application/x-python default -")
	if r.code != 0 || !reflect.DeepEqual(f.requests, []proto.ManagerRequest{importOf("h1", "application/x-python", "default", "-", hookScript)}) {
		t.Errorf("import from stdin: %+v, requests %+v", r, f.requests)
	}

	// A missing file is qmgr's error; nothing is sent.
	f = newFake()
	r = run1(t, f, "-c", "import hook h1 application/x-python default "+filepath.Join(dir, "none.py"))
	if r.code != exitExec || !strings.Contains(r.stderr, "qmgr: import hook h1: open ") || len(f.requests) != 0 {
		t.Errorf("missing file: %+v, requests %+v", r, f.requests)
	}
	// Bad base64 too.
	os.WriteFile(b64, []byte("not base64!\n"), 0o644)
	r = run1(t, f, "-c", "import hook h1 application/x-python base64 "+b64)
	if r.code != exitExec || !strings.Contains(r.stderr, "is not base64") || len(f.requests) != 0 {
		t.Errorf("bad base64: %+v, requests %+v", r, f.requests)
	}
}

// A hook error is reported with OpenPBS's closing line.
func TestHookErrorReported(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.fail["h1"] = &proto.Error{Code: proto.PBSE_HOOKERROR, Text: "order given (0) is outside the acceptable range of [1, 1000] for type 'site'."}
	r := run1(t, f, "-c", "set hook h1 order = 0")
	want := "qmgr obj=h1 svr=default: order given (0) is outside the acceptable range of [1, 1000] for type 'site'.\nqmgr: hook error returned from server\n"
	if r.code != exitExec || r.stderr != want {
		t.Errorf("got %+v, want stderr %q", r, want)
	}
}

// export writes the script or the configuration file, plain or base64,
// to the standard output or a file.
func TestExportHook(t *testing.T) {
	t.Parallel()
	f := hookFake()
	r := run1(t, f, "-c", "export hook h1 application/x-python default")
	if r.code != 0 || r.stdout != hookScript {
		t.Errorf("export script: %+v", r)
	}
	out := filepath.Join(t.TempDir(), "conf")
	r = run1(t, f, "-c", "export hook h1 application/x-config base64 "+out)
	got, _ := os.ReadFile(out)
	if r.code != 0 || string(got) != base64.StdEncoding.EncodeToString([]byte(`{"a": 1}`))+"\n" {
		t.Errorf("export config: %+v, file %q", r, got)
	}
	r = run1(t, f, "-c", "export hook h1 text/plain default")
	if r.code != exitExec || !strings.Contains(r.stderr, `content-type "text/plain"`) {
		t.Errorf("bad content type: %+v", r)
	}
	r = run1(t, f, "-c", "export hook nosuch application/x-python default")
	if r.code != exitExec || !strings.HasPrefix(r.stderr, "qmgr obj=nosuch svr=default: ") {
		t.Errorf("unknown hook: %+v", r)
	}
}

// What print writes, fed back to qmgr's standard input, recreates the
// hook: its attributes and both files.
func TestPrintHookReplays(t *testing.T) {
	t.Parallel()
	r := run1(t, hookFake(), "-c", "print hook")
	if r.code != 0 || !strings.Contains(r.stdout, "import hook h1 application/x-python base64 -\n") {
		t.Fatalf("print hook: %+v", r)
	}
	f := newFake()
	rr := runFake(t, f, config.PBSPro, r.stdout, false)
	if rr.code != 0 || rr.stderr != "" {
		t.Fatalf("replay: %+v", rr)
	}
	set := func(name, value string, op proto.Op) proto.ManagerRequest {
		return proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjHook, Name: "h1", Attrs: []proto.Attr{{Name: name, Value: value, Op: op}}}
	}
	want := []proto.ManagerRequest{
		{Command: proto.MgrCreate, Object: proto.ObjHook, Name: "h1"},
		set("type", "site", proto.OpSet), set("enabled", "true", proto.OpSet),
		set("event", "queuejob", proto.OpSet), set("event", "modifyjob", proto.OpIncr),
		set("alarm", "30", proto.OpSet),
		importOf("h1", "application/x-python", "base64", "-", hookScript),
		importOf("h1", "application/x-config", "base64", "-", `{"a": 1}`),
	}
	if !reflect.DeepEqual(f.requests, want) {
		t.Errorf("replayed\n%+v\nwant\n%+v", f.requests, want)
	}
}

// list hook with no hooks prints nothing and succeeds, as OpenPBS's.
func TestListNoHooks(t *testing.T) {
	t.Parallel()
	r := run1(t, newFake(), "-c", "list hook")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("got %+v", r)
	}
	r = run1(t, hookFake(), "-c", "list hook h1 enabled")
	if r.code != 0 || r.stdout != "Hook h1\n    enabled = true\n\n" {
		t.Errorf("list hook h1 enabled: %+v", r)
	}
}
