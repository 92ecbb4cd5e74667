package main

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"gopbs/internal/cmdutil"
	"gopbs/internal/config"
	"gopbs/proto"
)

type call struct {
	id    string
	force bool
}

// fake fails the ids listed in errs and records every call.
type fake struct {
	calls  []call
	errs   map[string]error
	closed bool
}

func (f *fake) DeleteJob(id string, force bool) error {
	f.calls = append(f.calls, call{id, force})
	return f.errs[id]
}
func (f *fake) ServerName() string { return "srv" }
func (f *fake) Close() error       { f.closed = true; return nil }

func runQdel(p config.Personality, f *fake, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qdel", Config: &config.Config{Personality: p}, Stdout: &out, Stderr: &errb}
	rc := runWith(env, args, func() (client, error) { return f, nil })
	return rc, out.String(), errb.String()
}

func TestQdel(t *testing.T) {
	unknown := &proto.Error{Code: proto.PBSE_UNKJOBID, Text: "Unknown Job Id"}
	finished := &proto.Error{Code: proto.PBSE_HISTJOBID, Text: "Job has finished"}
	tests := []struct {
		name   string
		p      config.Personality
		args   []string
		errs   map[string]error
		calls  []call
		rc     int
		stderr string
	}{
		{"several ids", config.PBSPro, []string{"1", " 2.srv\n", "3.other"}, nil,
			[]call{{"1", false}, {"2.srv", false}, {"3.other", false}}, 0, ""},
		{"force", config.PBSPro, []string{"-W", "force", "1"}, nil, []call{{"1", true}}, 0, ""},
		{"attached force", config.PBSPro, []string{"-Wforce", "1"}, nil, []call{{"1", true}}, 0, ""},
		{"torque purge", config.Torque, []string{"-p", "1"}, nil, []call{{"1", true}}, 0, ""},
		{"delay and -x accepted", config.PBSPro, []string{"-x", "-W", "30", "1"}, nil, []call{{"1", false}}, 0, ""},
		{"unknown id", config.PBSPro, []string{"9"}, map[string]error{"9": unknown}, []call{{"9", false}}, 153,
			"qdel: Unknown Job Id 9.srv\n"},
		{"torque wording", config.Torque, []string{"9.srv"}, map[string]error{"9.srv": unknown}, []call{{"9.srv", false}}, 153,
			"qdel: Unknown Job Id Error 9.srv\n"},
		{"last failure sets the status", config.PBSPro, []string{"9", "1", "3"},
			map[string]error{"9": unknown, "3": finished},
			[]call{{"9", false}, {"1", false}, {"3", false}}, 35,
			"qdel: Unknown Job Id 9.srv\nqdel: Job has finished 3.srv\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{errs: tt.errs}
			rc, out, stderr := runQdel(tt.p, f, tt.args...)
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

func TestQdelUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"-W", "soon", "1"}, {"-z", "1"}, {" "}, {"-W"}} {
		f := &fake{}
		rc, _, stderr := runQdel(config.PBSPro, f, args...)
		if rc != 2 || len(f.calls) != 0 || !bytes.Contains([]byte(stderr), []byte("usage: qdel")) {
			t.Errorf("%q: rc %d calls %v stderr %q", args, rc, f.calls, stderr)
		}
	}
}

func TestQdelConnectFailure(t *testing.T) {
	var errb bytes.Buffer
	env := &cmdutil.Env{Name: "qdel", Config: &config.Config{Personality: config.PBSPro}, Stdout: &bytes.Buffer{}, Stderr: &errb}
	rc := runWith(env, []string{"1"}, func() (client, error) { return nil, errors.New("no socket") })
	if rc != 1 || errb.String() != "qdel: no socket\n" {
		t.Errorf("rc %d stderr %q", rc, errb.String())
	}
}
