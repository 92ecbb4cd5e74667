package qalter

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/qsubopt"
	"github.com/gopbs/gopbs/proto"
)

type call struct {
	id    string
	attrs []proto.Attr
}

type fakeServer struct {
	errs    map[string]error
	calls   []call
	dialErr error
	dialed  bool
	closed  bool
}

func (f *fakeServer) AlterJob(id string, attrs []proto.Attr) error {
	f.calls = append(f.calls, call{id, attrs})
	return f.errs[id]
}

func (f *fakeServer) Close() error       { f.closed = true; return nil }
func (f *fakeServer) ServerName() string { return "srv" }

func testRun(args []string, srv *fakeServer) (int, string, string) {
	return testRunAs(config.PBSPro, args, srv)
}

func testRunAs(p config.Personality, args []string, srv *fakeServer) (int, string, string) {
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qalter", Config: &config.Config{Personality: p}, Stdout: &out, Stderr: &errb}
	sys := system{
		ctx: qsubopt.Context{Environ: []string{"X=from env"}, Cwd: "/w", Host: "h1", Now: time.Unix(0, 0)},
		connect: func() (alterer, error) {
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

func TestAlterEach(t *testing.T) {
	srv := &fakeServer{}
	rc, out, errs := testRun([]string{"-l", "walltime=1:00:00", "-v", "X", "-o", "out.log", "12", " 13.srv\n"}, srv)
	if rc != 0 || out != "" || errs != "" {
		t.Fatalf("rc %d stdout %q stderr %q", rc, out, errs)
	}
	want := []proto.Attr{
		{Name: "Resource_List", Resource: "walltime", Value: "1:00:00"},
		{Name: "Output_Path", Value: "h1:/w/out.log"},
		{Name: "Variable_List", Value: "X=from env", Op: proto.OpIncr},
	}
	if len(srv.calls) != 2 || srv.calls[0].id != "12" || srv.calls[1].id != "13.srv" ||
		!reflect.DeepEqual(srv.calls[0].attrs, want) || !reflect.DeepEqual(srv.calls[1].attrs, want) {
		t.Fatalf("calls %+v", srv.calls)
	}
	if !srv.closed {
		t.Error("connection not closed")
	}
}

func TestAlterErrors(t *testing.T) {
	srv := &fakeServer{errs: map[string]error{
		"1":     proto.NewError(proto.PBSE_UNKJOBID),
		"3.srv": proto.NewError(proto.PBSE_MODATRRUN),
	}}
	rc, out, errs := testRun([]string{"-N", "n", "1", "2", "3.srv"}, srv)
	if rc != int(proto.PBSE_MODATRRUN)%256 || out != "" {
		t.Fatalf("rc %d stdout %q", rc, out)
	}
	if errs != "qalter: Unknown Job Id 1.srv\nqalter: Cannot modify attribute while job running 3.srv\n" {
		t.Fatalf("stderr %q", errs)
	}
	if len(srv.calls) != 3 {
		t.Fatalf("an error stopped the other ids: %+v", srv.calls)
	}
	// Torque words the unknown id its own way.
	srv = &fakeServer{errs: map[string]error{"1": proto.NewError(proto.PBSE_UNKJOBID)}}
	if rc, _, errs := testRunAs(config.Torque, []string{"-N", "n", "1"}, srv); rc != 153 || errs != "qalter: Unknown Job Id Error 1.srv\n" {
		t.Fatalf("torque: rc %d stderr %q", rc, errs)
	}
	// The last failure sets the status even when a later id succeeds.
	srv = &fakeServer{errs: map[string]error{"1": proto.NewError(proto.PBSE_UNKJOBID)}}
	if rc, _, _ := testRun([]string{"-N", "n", "1", "2"}, srv); rc != 153 {
		t.Fatalf("rc %d, want 153", rc)
	}
}

func TestAlterUsage(t *testing.T) {
	for _, args := range [][]string{{"12"}, {"-N", "x"}, {"-z", "1"}, {"-p", "5000", "1"}, {}} {
		srv := &fakeServer{}
		rc, out, errs := testRun(args, srv)
		if rc != 2 || out != "" || !strings.HasPrefix(errs, "qalter: ") || !strings.Contains(errs, "\nusage: qalter ") || srv.dialed {
			t.Errorf("%q: rc %d stdout %q stderr %q dialed %v", args, rc, out, errs, srv.dialed)
		}
	}
}

func TestAlterConnectFailure(t *testing.T) {
	srv := &fakeServer{dialErr: &proto.Error{Code: proto.PBSE_NOSERVER, Text: "cannot connect to server at /s: refused"}}
	rc, _, errs := testRun([]string{"-N", "x", "1"}, srv)
	if rc != int(proto.PBSE_NOSERVER)%256 || errs != "qalter: cannot connect to server at /s: refused\n" {
		t.Fatalf("rc %d stderr %q", rc, errs)
	}
}
