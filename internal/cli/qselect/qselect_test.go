package qselect

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

type fake struct {
	crit    []proto.Attr
	history bool
	called  bool
	ids     []string
	err     error
}

func (f *fake) SelectJobs(req *proto.SelectRequest) ([]string, error) {
	f.crit, f.history, f.called = req.Criteria, req.History, true
	return f.ids, f.err
}
func (f *fake) Close() error { return nil }

// testNow is Monday 2024-01-01 13:00:00 UTC, in Unix seconds.
const testNow = 1704067200 + 13*3600

func runQselect(p config.Personality, f *fake, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qselect", Config: &config.Config{Personality: p, Server: "srv.example.com"}, Stdout: &out, Stderr: &errb}
	rc := runWith(env, args, deps{
		connect: func() (client, error) { return f, nil },
		now:     func() time.Time { return time.Unix(testNow, 0) },
		loc:     time.UTC,
	})
	return rc, out.String(), errb.String()
}

func a(name, res, value string, op proto.Op) proto.Attr {
	return proto.Attr{Name: name, Resource: res, Value: value, Op: op}
}

func TestCriteria(t *testing.T) {
	tests := []struct {
		name    string
		p       config.Personality
		args    []string
		crit    []proto.Attr
		history bool
	}{
		{"nothing selects all", config.PBSPro, nil, nil, false},
		{"user", config.PBSPro, []string{"-u", "alice"}, []proto.Attr{a("User_List", "", "alice", proto.OpEQ)}, false},
		{"resources with operators", config.PBSPro, []string{"-l", "ncpus.gt.4,mem.le.1gb", "-lwalltime.eq.01:00:00"}, []proto.Attr{
			a("Resource_List", "ncpus", "4", proto.OpGT), a("Resource_List", "mem", "1gb", proto.OpLE),
			a("Resource_List", "walltime", "01:00:00", proto.OpEQ)}, false},
		{"priority, hold, checkpoint", config.PBSPro, []string{"-p", ".ge.10", "-h", "u", "-c", ".ne.n"}, []proto.Attr{
			a("Priority", "", "10", proto.OpGE), a("Hold_Types", "", "u", proto.OpEQ), a("Checkpoint", "", "n", proto.OpNE)}, false},
		{"states", config.PBSPro, []string{"-s", "QR"}, []proto.Attr{a("job_state", "", "QR", proto.OpEQ)}, false},
		{"torque C is F and history is on", config.Torque, []string{"-s", "CR"}, []proto.Attr{a("job_state", "", "FR", proto.OpEQ)}, true},
		{"queue at server", config.PBSPro, []string{"-q", "workq@srv"}, []proto.Attr{a("queue", "", "workq", proto.OpEQ)}, false},
		{"whole server", config.PBSPro, []string{"-q", "@srv"}, nil, false},
		{"rerunable", config.PBSPro, []string{"-r", "n"}, []proto.Attr{a("Rerunable", "", "False", proto.OpEQ)}, false},
		{"names", config.PBSPro, []string{"-N", "job", "-A", "acct", "-P", "proj", "-J", "-T"}, []proto.Attr{
			a("Job_Name", "", "job", proto.OpEQ), a("Account_Name", "", "acct", proto.OpEQ), a("project", "", "proj", proto.OpEQ),
			a("array", "", "True", proto.OpEQ)}, false},
		{"history", config.PBSPro, []string{"-x"}, nil, true},
		{"-H selects finished", config.PBSPro, []string{"-H"}, []proto.Attr{a("job_state", "", "FM", proto.OpEQ)}, true},
		{"time today rolls to tomorrow", config.PBSPro, []string{"-a", "1200"},
			[]proto.Attr{a("Execution_Time", "", "1704196800", proto.OpEQ)}, false},
		{"time later today stays", config.PBSPro, []string{"-a", ".gt.1400"},
			[]proto.Attr{a("Execution_Time", "", "1704117600", proto.OpGT)}, false},
		{"full date, no roll", config.PBSPro, []string{"-a", ".lt.202401011100"},
			[]proto.Attr{a("Execution_Time", "", "1704106800", proto.OpLT)}, false},
		{"day given rolls a month", config.PBSPro, []string{"-a", "011200"},
			[]proto.Attr{a("Execution_Time", "", "1706788800", proto.OpEQ)}, false},
		{"month given rolls a year", config.PBSPro, []string{"-a", "01011200"},
			[]proto.Attr{a("Execution_Time", "", "1735732800", proto.OpEQ)}, false},
		{"two-digit year and seconds", config.PBSPro, []string{"-a", "2401021200.30"},
			[]proto.Attr{a("Execution_Time", "", "1704196830", proto.OpEQ)}, false},
		{"-t sub-options", config.PBSPro, []string{"-t", "c.ge.202401010000", "-t", "t1400"}, []proto.Attr{
			a("ctime", "", "1704067200", proto.OpGE), a("estimated", "start_time", "1704117600", proto.OpEQ)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{ids: []string{"1.srv", "2.srv"}}
			rc, out, stderr := runQselect(tt.p, f, tt.args...)
			if rc != 0 || stderr != "" || out != "1.srv\n2.srv\n" {
				t.Fatalf("rc %d stdout %q stderr %q", rc, out, stderr)
			}
			if !reflect.DeepEqual(f.crit, tt.crit) {
				t.Errorf("criteria\n got %+v\nwant %+v", f.crit, tt.crit)
			}
			if f.history != tt.history {
				t.Errorf("history = %v, want %v", f.history, tt.history)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-l", "ncpus=4"}, {"-l", "ncpus.gt."}, {"-l", "ncpus.gt.4,"}, {"-l", ".gt.4"}, {"-l", "ncpus.zz.4"},
		{"-r", "maybe"}, {"-a", "2500"}, {"-a", "12"}, {"-a", "0230.5"}, {"-a", "20240230"}, {"-a", ".zz.1200"},
		{"-p", ".gt."}, {"-t", "z1200"}, {"-t", ""}, {"1.srv"}, {"-Z"}, {"-s", ""},
	} {
		f := &fake{}
		rc, out, stderr := runQselect(config.PBSPro, f, args...)
		if rc != 2 || f.called || out != "" || !strings.Contains(stderr, "usage: qselect") {
			t.Errorf("%q: rc %d called %v stderr %q", args, rc, f.called, stderr)
		}
	}
}

func TestServerErrors(t *testing.T) {
	f := &fake{err: &proto.Error{Code: proto.PBSE_BADATVAL, Text: "Illegal attribute or resource value"}}
	rc, out, stderr := runQselect(config.PBSPro, f, "-l", "ncpus.gt.x")
	if rc != proto.PBSE_BADATVAL.ExitStatus() || out != "" || stderr != "qselect: Illegal attribute or resource value\n" {
		t.Errorf("rc %d stdout %q stderr %q", rc, out, stderr)
	}
	f = &fake{err: proto.NewError(proto.PBSE_JOBHISTNOTSET)}
	rc, _, stderr = runQselect(config.PBSPro, f, "-x")
	if rc != 0 || !strings.Contains(stderr, "not configured to maintain job history") {
		t.Errorf("history off: rc %d stderr %q", rc, stderr)
	}
	f = &fake{}
	if rc, out, _ := runQselect(config.PBSPro, f); rc != 0 || out != "" {
		t.Errorf("nothing matched: rc %d stdout %q", rc, out)
	}
}

// -q queue@server of another server, or a destination OpenPBS's
// parse_destination_id refuses, gets OpenPBS's words without a request.
func TestDestinations(t *testing.T) {
	cases := []struct {
		args   []string
		rc     int
		stderr string
	}{
		{[]string{"-q", "a@b"}, proto.PBSE_BADHOST.ExitStatus(), "qselect: cannot connect to server b (errno=15008)\n"},
		{[]string{"-q", "@elsewhere.org"}, proto.PBSE_BADHOST.ExitStatus(), "qselect: cannot connect to server elsewhere.org (errno=15008)\n"},
		{[]string{"-q", "a b@srv"}, 2, "qselect: illegally formed destination: a b@srv\n"},
		{[]string{"-q", "a@srv@srv"}, 2, "qselect: illegally formed destination: a@srv@srv\n"},
	}
	for _, c := range cases {
		f := &fake{}
		rc, out, stderr := runQselect(config.PBSPro, f, c.args...)
		if rc != c.rc || stderr != c.stderr || out != "" || f.called {
			t.Errorf("%q: rc %d stderr %q called %v", c.args, rc, stderr, f.called)
		}
	}
	for _, ok := range []string{"workq@srv", "workq@srv.example.com", "workq@srv:15001"} {
		if rc, _, stderr := runQselect(config.PBSPro, &fake{}, "-q", ok); rc != 0 || stderr != "" {
			t.Errorf("-q %s: rc %d stderr %q", ok, rc, stderr)
		}
	}
}
