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

type call struct{ id, types string }

type fake struct {
	calls  []call
	errs   map[string]error
	closed bool
}

func (f *fake) ReleaseJob(id, types string) error {
	f.calls = append(f.calls, call{id, types})
	return f.errs[id]
}
func (f *fake) ServerName() string { return "srv" }
func (f *fake) Close() error       { f.closed = true; return nil }

func runCmd(p config.Personality, f *fake, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qrls", Config: &config.Config{Personality: p}, Stdout: &out, Stderr: &errb}
	rc := runWith(env, args, func() (client, error) { return f, nil })
	return rc, out.String(), errb.String()
}

func TestQrls(t *testing.T) {
	perm := &proto.Error{Code: proto.PBSE_PERM, Text: "Unauthorized Request "}
	unknown := &proto.Error{Code: proto.PBSE_UNKJOBID, Text: "Unknown Job Id"}
	tests := []struct {
		name   string
		p      config.Personality
		args   []string
		errs   map[string]error
		calls  []call
		rc     int
		stderr string
	}{
		{"default is a user hold", config.PBSPro, []string{"1", "2.srv\n"}, nil, []call{{"1", "u"}, {"2.srv", "u"}}, 0, ""},
		{"hold list", config.PBSPro, []string{"-h", "os", "1"}, nil, []call{{"1", "os"}}, 0, ""},
		{"attached hold list", config.Torque, []string{"-hu", "1"}, nil, []call{{"1", "u"}}, 0, ""},
		{"server refuses", config.PBSPro, []string{"-h", "s", "1"}, map[string]error{"1": perm}, []call{{"1", "s"}}, 159,
			"qrls: Unauthorized Request 1.srv\n"},
		{"torque unknown", config.Torque, []string{"8", "1"}, map[string]error{"8": unknown}, []call{{"8", "u"}, {"1", "u"}}, 153,
			"qrls: Unknown Job Id Error 8.srv\n"},
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
	for _, args := range [][]string{nil, {"-h", "x", "1"}, {"-h", "", "1"}, {"-q", "1"}, {"-h"}} {
		f := &fake{}
		rc, _, stderr := runCmd(config.PBSPro, f, args...)
		if rc != 2 || len(f.calls) != 0 || !strings.Contains(stderr, "usage: qrls") {
			t.Errorf("%q: rc %d calls %v stderr %q", args, rc, f.calls, stderr)
		}
	}
}
