package qsub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/qsubopt"
	"github.com/gopbs/gopbs/proto"
)

type fakeServer struct {
	id      string
	err     error
	got     *proto.SubmitRequest
	closed  bool
	dialErr error
	dialed  bool
	// polls are the answers to StatusJobs, in order (the last repeats).
	polls  []poll
	polled int
	dials  int
	// dialFails, when set, limits dialErr to the first dialFails dials.
	dialFails int
	slept     time.Duration // the test clock's sleeps
	// submitted, when set, sees each submission (an interactive job's
	// shepherd starts from there); deleted lists the jobs deleted.
	submitted func(*proto.SubmitRequest)
	deleted   []string
	// addrs are what the host WhoAmI names ("h1") resolves to for
	// qsub -I (nil: 127.0.0.1); looked up are the names it resolved.
	addrs    []net.IP
	lookedUp []string
	// defaults is the server's default_qsub_arguments.
	defaults string
}

func (f *fakeServer) StatusServer([]string) (proto.Status, error) {
	st := proto.Status{Name: "srv"}
	if f.defaults != "" {
		st.Attrs = []proto.Attr{{Name: proto.AttrDefaultQsubArguments, Value: f.defaults}}
	}
	return st, nil
}

func (f *fakeServer) WhoAmI() (proto.WhoAmIReply, error) {
	return proto.WhoAmIReply{User: "u", Host: "h1"}, nil
}

func (f *fakeServer) DeleteJob(id string, _ proto.DeleteOptions) error {
	f.deleted = append(f.deleted, id)
	return nil
}

// poll is one answer to a status request.
type poll struct {
	state, exit string
	errs        []proto.ObjectError
	err         error
}

func (f *fakeServer) StatusJobs(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	if len(f.polls) == 0 {
		return nil, nil, errors.New("no status expected")
	}
	p := f.polls[min(f.polled, len(f.polls)-1)]
	f.polled++
	if p.err != nil || p.errs != nil {
		return nil, p.errs, p.err
	}
	st := proto.Status{Name: req.IDs[0], Attrs: []proto.Attr{{Name: proto.AttrJobState, Value: p.state}}}
	if p.exit != "" {
		st.Attrs = append(st.Attrs, proto.Attr{Name: proto.AttrExitStatus, Value: p.exit})
	}
	return []proto.Status{st}, nil, nil
}

func (f *fakeServer) Submit(req *proto.SubmitRequest) (string, error) {
	f.got = req
	if f.submitted != nil {
		f.submitted(req)
	}
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
		clock: clock{
			now:   func() time.Time { return time.Unix(1700000000+int64(srv.polled)*60, 0).Add(srv.slept) },
			sleep: func(d time.Duration) { srv.slept += d },
		},
		lookupIP: func(_ context.Context, host string) ([]net.IP, error) {
			srv.lookedUp = append(srv.lookedUp, host)
			if host != "h1" {
				return nil, fmt.Errorf("lookup %s: no such host", host)
			}
			if srv.addrs != nil {
				return srv.addrs, nil
			}
			return []net.IP{net.IPv4(127, 0, 0, 1)}, nil
		},
		connect: func() (submitter, error) {
			srv.dials++
			srv.dialed = true
			if srv.dialErr != nil && (srv.dialFails == 0 || srv.dials <= srv.dialFails) {
				return nil, srv.dialErr
			}
			return srv, nil
		},
	}
	rc := run(env, args, sys)
	return rc, out.String(), errb.String()
}

func TestSuccess(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// Torque's -b: qsub keeps trying to reach a server that is down for up
// to that many seconds, and no longer; without it, it tries once. Other
// failures are not retried.
func TestConnectWait(t *testing.T) {
	t.Parallel()
	down := &proto.Error{Code: proto.PBSE_NOSERVER, Text: "cannot connect to server: connection refused"}
	files := map[string]string{"job.sh": "true\n"}
	srv := &fakeServer{id: "1.s", dialErr: down, dialFails: 3}
	if rc, out, errs := testRun(t, config.Torque, []string{"-b", "10", "job.sh"}, files, "", srv); rc != 0 || out != "1.s\n" || errs != "" || srv.dials != 4 {
		t.Fatalf("server back after 3 s: rc %d stdout %q stderr %q, %d dials", rc, out, errs, srv.dials)
	}
	srv = &fakeServer{id: "1.s", dialErr: down}
	if rc, _, errs := testRun(t, config.Torque, []string{"-b", "5", "job.sh"}, files, "", srv); rc != 162 || !strings.Contains(errs, "connection refused") || srv.dials != 6 || srv.slept != 5*time.Second {
		t.Fatalf("server down for good: rc %d stderr %q, %d dials over %v", rc, errs, srv.dials, srv.slept)
	}
	srv = &fakeServer{id: "1.s", dialErr: down, dialFails: 1}
	if rc, _, _ := testRun(t, config.Torque, []string{"job.sh"}, files, "", srv); rc != 162 || srv.dials != 1 {
		t.Fatalf("without -b: rc %d, %d dials", rc, srv.dials)
	}
	srv = &fakeServer{id: "1.s", dialErr: &proto.Error{Code: proto.PBSE_BADCRED}, dialFails: 1}
	if rc, _, _ := testRun(t, config.Torque, []string{"-b", "10", "job.sh"}, files, "", srv); rc != 171 || srv.dials != 1 {
		t.Fatalf("refused credential: rc %d, %d dials", rc, srv.dials)
	}
}

func TestUsageAndLocalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		rc   int
		msg  string
	}{
		{[]string{"-Q", "job.sh"}, 2, "qsub: invalid option -- 'Q'\nusage: qsub "},
		{[]string{"-j", "xx", "job.sh"}, 2, "qsub: illegal -j value \"xx\": want oe, eo or n\nusage: qsub "},
		{[]string{"bad.sh"}, 2, "qsub: directive on line 1: illegal -p value \"x\""},
		{[]string{"-I", "-J", "1-2"}, 2, "qsub: interactive and array job submission cannot be used together\nusage: qsub "},
		{[]string{"-n", "-l", "place=shared", "job.sh"}, 2, "qsub: -n (node exclusive) conflicts with place=shared"},
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
	t.Parallel()
	for pers, want := range map[config.Personality]string{config.PBSPro: "pbs_version = 23.06.06\n", config.Torque: "Version: 6.1.3\n"} {
		srv := &fakeServer{}
		rc, out, errs := testRun(t, pers, []string{"--version"}, nil, "", srv)
		if rc != 0 || out != want || errs != "" || srv.dialed {
			t.Errorf("%s: rc %d stdout %q stderr %q dialed %v", pers, rc, out, errs, srv.dialed)
		}
	}
}

// TestBlock: -W block=true makes qsub wait for the job's end and exit with
// its exit status, reconnecting when the server goes away for a while.
func TestBlock(t *testing.T) {
	t.Parallel()
	files := map[string]string{"job.sh": "#!/bin/sh\nexit 3\n"}
	lost := &proto.Error{Code: proto.PBSE_PROTOCOL, Text: "connection reset"}
	tests := []struct {
		name     string
		polls    []poll
		rc       int
		dials    int
		stderr   string
		polledAt int
	}{
		{"finishes", []poll{{state: "Q"}, {state: "R"}, {state: "F", exit: "3"}}, 3, 1, "", 3},
		{"exit 0", []poll{{state: "F", exit: "0"}}, 0, 1, "", 1},
		{"server restart", []poll{{state: "R"}, {err: lost}, {state: "F", exit: "7"}}, 7, 2, "", 3},
		{"no history", []poll{{state: "R"}, {errs: []proto.ObjectError{{Name: "1.srv", Code: proto.PBSE_UNKJOBID}}}}, proto.PBSE_UNKJOBID.ExitStatus(), 1, "left no history", 2},
		{"server gone for good", []poll{{state: "R"}, {err: lost}}, proto.PBSE_PROTOCOL.ExitStatus(), 0, "lost the server", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &fakeServer{id: "1.srv", polls: tt.polls}
			rc, out, errs := testRun(t, config.PBSPro, []string{"-W", "block=true", "job.sh"}, files, "", srv)
			if rc != tt.rc || out != "1.srv\n" || !strings.Contains(errs, tt.stderr) || tt.stderr == "" && errs != "" {
				t.Fatalf("rc %d (want %d) stdout %q stderr %q (want %q)", rc, tt.rc, out, errs, tt.stderr)
			}
			if tt.dials > 0 && srv.dials != tt.dials {
				t.Errorf("dialed %d times, want %d", srv.dials, tt.dials)
			}
			if tt.polledAt > 0 && srv.polled != tt.polledAt {
				t.Errorf("polled %d times, want %d", srv.polled, tt.polledAt)
			}
		})
	}
	// Without block qsub asks nothing after the submission.
	srv := &fakeServer{id: "1.srv"}
	if rc, _, _ := testRun(t, config.PBSPro, []string{"job.sh"}, files, "", srv); rc != 0 || srv.polled != 0 {
		t.Fatalf("without block: rc %d, %d polls", rc, srv.polled)
	}
}
