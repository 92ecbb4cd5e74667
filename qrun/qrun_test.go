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

func (f *fake) RunJob(id, arg string) error {
	f.calls = append(f.calls, call{id, arg})
	return f.errs[id]
}
func (f *fake) ServerName() string { return "srv" }
func (f *fake) Close() error       { f.closed = true; return nil }

func runCmd(p config.Personality, f *fake, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qrun", Config: &config.Config{Personality: p}, Stdout: &out, Stderr: &errb}
	rc := runWith(env, args, func() (client, error) { return f, nil })
	return rc, out.String(), errb.String()
}

func TestQrun(t *testing.T) {
	tests := []struct {
		name   string
		p      config.Personality
		args   []string
		errs   map[string]error
		calls  []call
		rc     int
		stderr string
	}{
		{"server chooses", config.PBSPro, []string{"1", " 2 "}, nil, []call{{"1", ""}, {"2", ""}}, 0, ""},
		{"hosts", config.PBSPro, []string{"-H", "n1+n2", "1"}, nil, []call{{"1", "n1+n2"}}, 0, ""},
		{"async accepted", config.Torque, []string{"-a", "-Hn1", "1"}, nil, []call{{"1", "n1"}}, 0, ""},
		{"not allowed", config.PBSPro, []string{"1"},
			map[string]error{"1": &proto.Error{Code: proto.PBSE_PERM, Text: "Unauthorized Request "}},
			[]call{{"1", ""}}, 159, "qrun: Unauthorized Request 1.srv\n"},
		{"torque unknown", config.Torque, []string{"9"},
			map[string]error{"9": &proto.Error{Code: proto.PBSE_UNKJOBID, Text: "Unknown Job Id"}},
			[]call{{"9", ""}}, 153, "qrun: Unknown Job Id Error 9.srv\n"},
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
	for _, args := range [][]string{nil, {"-H", " ", "1"}, {"-z", "1"}, {"-H"}, {"\n"}} {
		f := &fake{}
		rc, _, stderr := runCmd(config.PBSPro, f, args...)
		if rc != 2 || len(f.calls) != 0 || !strings.Contains(stderr, "usage: qrun") {
			t.Errorf("%q: rc %d calls %v stderr %q", args, rc, f.calls, stderr)
		}
	}
}
