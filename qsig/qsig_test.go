package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"gopbs/internal/cmdutil"
	"gopbs/internal/config"
	"gopbs/proto"
)

type call struct{ id, arg string }

type fake struct {
	calls  []call
	errs   map[string]error
	closed bool
}

func (f *fake) SignalJob(id, arg string) error {
	f.calls = append(f.calls, call{id, arg})
	return f.errs[id]
}
func (f *fake) ServerName() string { return "srv" }
func (f *fake) Close() error       { f.closed = true; return nil }

func runCmd(p config.Personality, f *fake, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qsig", Config: &config.Config{Personality: p}, Stdout: &out, Stderr: &errb}
	rc := runWith(env, args, func() (client, error) { return f, nil })
	return rc, out.String(), errb.String()
}

func TestQsig(t *testing.T) {
	tests := []struct {
		name   string
		p      config.Personality
		args   []string
		errs   map[string]error
		calls  []call
		rc     int
		stderr string
	}{
		{"default SIGTERM", config.PBSPro, []string{"1", "2.srv\n"}, nil, []call{{"1", "SIGTERM"}, {"2.srv", "SIGTERM"}}, 0, ""},
		{"name passed through", config.PBSPro, []string{"-s", "KILL", "1"}, nil, []call{{"1", "KILL"}}, 0, ""},
		{"number, option after operand", config.Torque, []string{"-s9", "1", "-a"}, nil, []call{{"1", "9"}}, 0, ""},
		{"suspend", config.PBSPro, []string{"-s", "suspend", "1"}, nil, []call{{"1", "suspend"}}, 0, ""},
		{"server rejects the signal", config.PBSPro, []string{"-s", "BOGUS", "1"},
			map[string]error{"1": &proto.Error{Code: proto.PBSE_UNKSIG, Text: "Unknown/illegal signal name"}},
			[]call{{"1", "BOGUS"}}, 165, "qsig: Unknown/illegal signal name 1.srv\n"},
		{"not running", config.Torque, []string{"1", "2"},
			map[string]error{"1": &proto.Error{Code: proto.PBSE_BADSTATE, Text: "Request invalid for state of job"}},
			[]call{{"1", "SIGTERM"}, {"2", "SIGTERM"}}, 168, "qsig: Request invalid for state of job 1.srv\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{errs: tt.errs}
			rc, out, stderr := runCmd(tt.p, f, tt.args...)
			if rc != tt.rc || stderr != tt.stderr || out != "" {
				t.Errorf("rc %d stdout %q stderr %q, want rc %d stderr %q", rc, out, stderr, tt.rc, tt.stderr)
			}
			if !reflect.DeepEqual(f.calls, tt.calls) {
				t.Errorf("calls %v, want %v", f.calls, tt.calls)
			}
			if !f.closed {
				t.Error("connection not closed")
			}
		})
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"-s", " ", "1"}, {"-z", "1"}, {"-s"}, {"\n"}} {
		f := &fake{}
		rc, _, stderr := runCmd(config.PBSPro, f, args...)
		if rc != 2 || len(f.calls) != 0 || !strings.Contains(stderr, "usage: qsig") {
			t.Errorf("%q: rc %d calls %v stderr %q", args, rc, f.calls, stderr)
		}
	}
}
