package jobcmd

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

// fake records every request as "verb id arg".
type fake struct {
	calls  []string
	errs   map[string]error
	closed bool
}

func (f *fake) record(verb, id, arg string) error {
	f.calls = append(f.calls, verb+" "+id+" "+arg)
	return f.errs[id]
}
func (f *fake) DeleteJob(id string, opts proto.DeleteOptions) error {
	return f.record("del", id, opts.String())
}
func (f *fake) HoldJob(id, types string) error    { return f.record("hold", id, types) }
func (f *fake) ReleaseJob(id, types string) error { return f.record("rls", id, types) }
func (f *fake) SignalJob(id, sig string) error    { return f.record("sig", id, sig) }
func (f *fake) RunJob(id, nodes string) error     { return f.record("run", id, nodes) }
func (f *fake) MoveJob(id, dest string) error     { return f.record("move", id, dest) }
func (f *fake) RerunJob(id string, force bool) error {
	arg := ""
	if force {
		arg = "force"
	}
	return f.record("rerun", id, arg)
}
func (f *fake) ServerName() string { return "srv" }
func (f *fake) Close() error       { f.closed = true; return nil }

func run(cmd *Command, p config.Personality, f *fake, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: cmd.Name, Config: &config.Config{Personality: p}, Stdout: &out, Stderr: &errb}
	rc := cmd.Run(env, args, func() (Client, error) { return f, nil })
	return rc, out.String(), errb.String()
}

func TestCommands(t *testing.T) {
	unknown := &proto.Error{Code: proto.PBSE_UNKJOBID, Text: "Unknown Job Id"}
	finished := &proto.Error{Code: proto.PBSE_HISTJOBID, Text: "Job has finished"}
	perm := &proto.Error{Code: proto.PBSE_PERM, Text: "Unauthorized Request "}
	tests := []struct {
		name   string
		cmd    *Command
		p      config.Personality
		args   []string
		errs   map[string]error
		calls  []string
		rc     int
		stderr string
	}{
		{"qdel several ids", Delete, config.PBSPro, []string{"1", " 2.srv\n", "3.other"}, nil, []string{"del 1 ", "del 2.srv ", "del 3.other "}, 0, ""},
		{"qdel J J deletes once (issue 30)", Delete, config.PBSPro, []string{"1.srv", "1.srv", " 1.srv"}, nil, []string{"del 1.srv "}, 0, ""},
		{"qdel force", Delete, config.PBSPro, []string{"-W", "force", "1"}, nil, []string{"del 1 force"}, 0, ""},
		{"qdel attached force", Delete, config.PBSPro, []string{"-Wforce", "1"}, nil, []string{"del 1 force"}, 0, ""},
		{"qdel torque purge", Delete, config.Torque, []string{"-p", "1"}, nil, []string{"del 1 force"}, 0, ""},
		{"qdel delay and -x", Delete, config.PBSPro, []string{"-x", "-W", "30", "1"}, nil, []string{"del 1 purge,delay=30"}, 0, ""},
		{"qdel suppress_email", Delete, config.PBSPro, []string{"-W", "suppress_email=1", "1"}, nil, []string{"del 1 "}, 0, ""},
		{"qdel unknown id", Delete, config.PBSPro, []string{"9"}, map[string]error{"9": unknown}, []string{"del 9 "}, 153, "qdel: Unknown Job Id 9.srv\n"},
		{"qdel torque wording", Delete, config.Torque, []string{"9.srv"}, map[string]error{"9.srv": unknown}, []string{"del 9.srv "}, 153, "qdel: Unknown Job Id Error 9.srv\n"},
		{"qdel last failure sets the status", Delete, config.PBSPro, []string{"9", "1", "3"}, map[string]error{"9": unknown, "3": finished},
			[]string{"del 9 ", "del 1 ", "del 3 "}, 35, "qdel: Unknown Job Id 9.srv\nqdel: Job has finished 3.srv\n"},
		{"qhold default user hold", Hold, config.PBSPro, []string{"1", "2.srv\n"}, nil, []string{"hold 1 u", "hold 2.srv u"}, 0, ""},
		{"qhold hold list", Hold, config.PBSPro, []string{"-h", "os", "1"}, nil, []string{"hold 1 os"}, 0, ""},
		{"qhold refused", Hold, config.PBSPro, []string{"-h", "s", "1"}, map[string]error{"1": perm}, []string{"hold 1 s"}, 159, "qhold: Unauthorized Request 1.srv\n"},
		{"qrls attached list", Release, config.Torque, []string{"-hu", "1"}, nil, []string{"rls 1 u"}, 0, ""},
		{"qrls torque unknown", Release, config.Torque, []string{"8", "1"}, map[string]error{"8": unknown}, []string{"rls 8 u", "rls 1 u"}, 153, "qrls: Unknown Job Id Error 8.srv\n"},
		{"qsig default", Signal, config.PBSPro, []string{"1"}, nil, []string{"sig 1 SIGTERM"}, 0, ""},
		{"qsig number after operand", Signal, config.Torque, []string{"-s9", "1", "-a"}, nil, []string{"sig 1 9"}, 0, ""},
		{"qsig suspend", Signal, config.PBSPro, []string{"-s", "suspend", "1"}, nil, []string{"sig 1 suspend"}, 0, ""},
		{"qsig bad state", Signal, config.Torque, []string{"1"}, map[string]error{"1": &proto.Error{Code: proto.PBSE_BADSTATE, Text: "Request invalid for state of job"}},
			[]string{"sig 1 SIGTERM"}, 168, "qsig: Request invalid for state of job 1.srv\n"},
		{"qrun server chooses", Run, config.PBSPro, []string{"1", " 2 "}, nil, []string{"run 1 ", "run 2 "}, 0, ""},
		{"qrun hosts", Run, config.PBSPro, []string{"-H", "n1+n2", "1"}, nil, []string{"run 1 n1+n2"}, 0, ""},
		{"qrerun", Rerun, config.PBSPro, []string{"1", "2"}, nil, []string{"rerun 1 ", "rerun 2 "}, 0, ""},
		{"qmove", Move, config.PBSPro, []string{"q2", "1", "2"}, nil, []string{"move 1 q2", "move 2 q2"}, 0, ""},
		{"qrerun -W force", Rerun, config.PBSPro, []string{"-W", "force", "1"}, nil, []string{"rerun 1 force"}, 0, ""},
		{"qrerun -f (torque)", Rerun, config.Torque, []string{"-f", "1"}, nil, []string{"rerun 1 force"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{errs: tt.errs}
			rc, out, stderr := run(tt.cmd, tt.p, f, tt.args...)
			if rc != tt.rc || stderr != tt.stderr || out != "" {
				t.Errorf("rc %d stdout %q stderr %q, want rc %d stderr %q", rc, out, stderr, tt.rc, tt.stderr)
			}
			if !reflect.DeepEqual(f.calls, tt.calls) {
				t.Errorf("calls %q, want %q", f.calls, tt.calls)
			}
			if !f.closed {
				t.Error("connection not closed")
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		cmd  *Command
		args []string
	}{
		{Delete, nil}, {Delete, []string{"-W", "soon", "1"}}, {Delete, []string{"-z", "1"}}, {Delete, []string{" "}}, {Delete, []string{"-W"}},
		{Hold, []string{"-h", "x", "1"}}, {Hold, []string{"-h", "", "1"}}, {Hold, []string{"-h"}},
		{Release, []string{"-q", "1"}},
		{Signal, []string{"-s", " ", "1"}}, {Signal, []string{"-s"}}, {Signal, []string{"\n"}},
		{Run, []string{"-H", " ", "1"}}, {Run, []string{"-H"}},
		{Rerun, []string{"-W", "soon", "1"}}, {Rerun, nil},
		{Move, nil}, {Move, []string{"q2"}}, {Move, []string{"-x", "q2", "1"}},
	}
	for _, tt := range tests {
		f := &fake{}
		rc, _, stderr := run(tt.cmd, config.PBSPro, f, tt.args...)
		if rc != 2 || len(f.calls) != 0 || !strings.Contains(stderr, "usage: "+tt.cmd.Name) {
			t.Errorf("%s %q: rc %d calls %v stderr %q", tt.cmd.Name, tt.args, rc, f.calls, stderr)
		}
	}
}

func TestConnectFailure(t *testing.T) {
	var errb bytes.Buffer
	env := &cmdutil.Env{Name: "qdel", Config: &config.Config{Personality: config.PBSPro}, Stdout: &bytes.Buffer{}, Stderr: &errb}
	rc := Delete.Run(env, []string{"1"}, func() (Client, error) { return nil, errors.New("no socket") })
	if rc != 1 || errb.String() != "qdel: no socket\n" {
		t.Errorf("rc %d stderr %q", rc, errb.String())
	}
}
