package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/internal/cmdutil"
	"gopbs/internal/config"
	"gopbs/internal/qsubopt"
	"gopbs/proto"
)

type fakeServer struct {
	id      string
	err     error
	got     *proto.SubmitRequest
	closed  bool
	dialErr error
	dialed  bool
}

func (f *fakeServer) Submit(req *proto.SubmitRequest) (string, error) {
	f.got = req
	return f.id, f.err
}

func (f *fakeServer) Close() error { f.closed = true; return nil }

func testRun(t *testing.T, pers config.Personality, args []string, files map[string]string, stdin string, srv *fakeServer) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qsub", Config: &config.Config{Personality: pers}, Stdout: &out, Stderr: &errb}
	sys := system{
		ctx: qsubopt.Context{
			Environ: []string{"HOME=/home/u", "PATH=/bin"},
			Cwd:     "/home/u",
			Host:    "h1",
			Now:     time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
			ReadFile: func(p string) ([]byte, error) {
				if s, ok := files[p]; ok {
					return []byte(s), nil
				}
				return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
			},
			Stdin: strings.NewReader(stdin),
		},
		connect: func() (submitter, error) {
			srv.dialed = true
			if srv.dialErr != nil {
				return nil, srv.dialErr
			}
			return srv, nil
		},
	}
	rc := run(env, args, sys)
	return rc, out.String(), errb.String()
}

func TestSuccess(t *testing.T) {
	srv := &fakeServer{id: "123.srv"}
	rc, out, errs := testRun(t, config.PBSPro, []string{"-N", "x", "job.sh"}, map[string]string{"job.sh": "#!/bin/sh\ntrue\n"}, "", srv)
	if rc != 0 || out != "123.srv\n" || errs != "" {
		t.Fatalf("rc %d stdout %q stderr %q", rc, out, errs)
	}
	if srv.got == nil || string(srv.got.Script) != "#!/bin/sh\ntrue\n" || !srv.closed {
		t.Fatalf("request %+v closed %v", srv.got, srv.closed)
	}
}

func TestStdinAndQuiet(t *testing.T) {
	srv := &fakeServer{id: "7.srv"}
	rc, out, errs := testRun(t, config.Torque, []string{"-z"}, nil, "#PBS -l ncpus=2\nhostname\n", srv)
	if rc != 0 || out != "" || errs != "" {
		t.Fatalf("-z: rc %d stdout %q stderr %q", rc, out, errs)
	}
	if string(srv.got.Script) != "#PBS -l ncpus=2\nhostname\n" {
		t.Fatalf("script %q", srv.got.Script)
	}
	found := false
	for _, a := range srv.got.Attrs {
		if a.Name == proto.AttrJobName && a.Value == "STDIN" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no Job_Name STDIN in %v", srv.got.Attrs)
	}
}

// The script is spooled: a file removed right after qsub read it (dask)
// is still submitted. This uses the real file system.
func TestScriptSpooled(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho spooled\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qsub", Config: &config.Config{Personality: config.PBSPro}, Stdout: &out, Stderr: &errb}
	sys := processSystem(env)
	srv := &fakeServer{id: "1.s"}
	sys.connect = func() (submitter, error) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		return srv, nil
	}
	if rc := run(env, []string{p}, sys); rc != 0 || out.String() != "1.s\n" {
		t.Fatalf("rc %d out %q err %q", rc, out.String(), errb.String())
	}
	if string(srv.got.Script) != "#!/bin/sh\necho spooled\n" {
		t.Fatalf("script %q", srv.got.Script)
	}
}

func TestServerError(t *testing.T) {
	srv := &fakeServer{err: proto.Errorf(proto.PBSE_UNKQUE, "nosuch")}
	rc, out, errs := testRun(t, config.PBSPro, []string{"-q", "nosuch", "job.sh"}, map[string]string{"job.sh": "true\n"}, "", srv)
	if rc != int(proto.PBSE_UNKQUE)%256 || out != "" || errs != "qsub: Unknown queue nosuch\n" {
		t.Fatalf("rc %d stdout %q stderr %q", rc, out, errs)
	}
	srv = &fakeServer{}
	rc, out, errs = testRun(t, config.PBSPro, []string{"job.sh"}, map[string]string{"job.sh": "true\n"}, "", srv)
	if rc != int(proto.PBSE_PROTOCOL)%256 || out != "" || !strings.Contains(errs, "no job id") {
		t.Fatalf("empty id: rc %d stdout %q stderr %q", rc, out, errs)
	}
}

func TestConnectFailure(t *testing.T) {
	srv := &fakeServer{dialErr: &proto.Error{Code: proto.PBSE_NOSERVER, Text: "cannot connect to server at /x/pbs_server.sock: connection refused"}}
	rc, out, errs := testRun(t, config.PBSPro, []string{"job.sh"}, map[string]string{"job.sh": "true\n"}, "", srv)
	if rc != 162 || out != "" || errs != "qsub: cannot connect to server at /x/pbs_server.sock: connection refused\n" {
		t.Fatalf("rc %d stdout %q stderr %q", rc, out, errs)
	}
	srv = &fakeServer{dialErr: &proto.Error{Code: proto.PBSE_BADCRED}}
	if rc, _, errs := testRun(t, config.PBSPro, []string{"job.sh"}, map[string]string{"job.sh": "true\n"}, "", srv); rc != 171 || errs != "qsub: Invalid credential\n" {
		t.Fatalf("bad credential: rc %d stderr %q", rc, errs)
	}
	srv = &fakeServer{dialErr: errors.New("boom")}
	if rc, _, errs := testRun(t, config.PBSPro, []string{"job.sh"}, map[string]string{"job.sh": "true\n"}, "", srv); rc != 1 || errs != "qsub: boom\n" {
		t.Fatalf("plain error: rc %d stderr %q", rc, errs)
	}
}

func TestUsageAndLocalErrors(t *testing.T) {
	tests := []struct {
		args []string
		rc   int
		msg  string
	}{
		{[]string{"-Q", "job.sh"}, 2, "qsub: invalid option -- 'Q'\nusage: qsub "},
		{[]string{"-j", "xx", "job.sh"}, 2, "qsub: illegal -j value \"xx\": want oe, eo or n\nusage: qsub "},
		{[]string{"bad.sh"}, 2, "qsub: directive on line 1: illegal -p value \"x\""},
		{[]string{"-I"}, 1, "qsub: interactive jobs are not supported\n"},
		{[]string{"missing.sh"}, 1, "qsub: cannot read script file missing.sh: file does not exist\n"},
	}
	for _, tt := range tests {
		srv := &fakeServer{id: "1.s"}
		rc, out, errs := testRun(t, config.PBSPro, tt.args, map[string]string{"job.sh": "true\n", "bad.sh": "#PBS -p x\n"}, "", srv)
		if rc != tt.rc || out != "" || !strings.HasPrefix(errs, tt.msg) {
			t.Errorf("%q: rc %d stdout %q stderr %q; want rc %d stderr starting %q", tt.args, rc, out, errs, tt.rc, tt.msg)
		}
		if srv.dialed {
			t.Errorf("%q: connected to the server despite a local error", tt.args)
		}
	}
}

func TestVersion(t *testing.T) {
	for pers, want := range map[config.Personality]string{config.PBSPro: "pbs_version = 23.06.06\n", config.Torque: "Version: 6.1.3\n"} {
		srv := &fakeServer{}
		rc, out, errs := testRun(t, pers, []string{"--version"}, nil, "", srv)
		if rc != 0 || out != want || errs != "" || srv.dialed {
			t.Errorf("%s: rc %d stdout %q stderr %q dialed %v", pers, rc, out, errs, srv.dialed)
		}
	}
}
