package qorder

import (
	"bytes"
	"testing"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

type fakeServer struct {
	calls [][2]string
	err   error
}

func (f *fakeServer) OrderJob(id1, id2 string) error {
	f.calls = append(f.calls, [2]string{id1, id2})
	return f.err
}
func (f *fakeServer) ServerName() string { return "srv" }
func (f *fakeServer) Close() error       { return nil }

func TestQorder(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		err    error
		rc     int
		stderr string
		sent   bool
	}{
		{"swap", []string{"12", " 13.srv\n"}, nil, 0, "", true},
		{"one operand", []string{"12"}, nil, 2, usage, false},
		{"three operands", []string{"1", "2", "3"}, nil, 2, usage, false},
		{"an option", []string{"-a", "2"}, nil, 2, usage, false},
		{"bad id", []string{"x12", "13"}, nil, 1, "qorder: illegally formed job identifier: x12\n", false},
		{"two servers", []string{"12.srv", "13.other"}, nil, 1, "qorder: both jobs ids must specify the same server\n", false},
		{"short and full name", []string{"12.srv", "13@srv.example.com"}, nil, 0, "", true},
		{"running", []string{"12", "13"}, proto.NewError(proto.PBSE_BADSTATE), proto.PBSE_BADSTATE.ExitStatus(),
			"qorder: Request invalid for state of job 12.srv or 13.srv\n", true},
		{"not owner", []string{"12.srv", "13"}, proto.NewError(proto.PBSE_PERM), proto.PBSE_PERM.ExitStatus(),
			"qorder: Unauthorized Request 12.srv or 13.srv\n", true},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		env := &cmdutil.Env{Name: "qorder", Config: &config.Config{Personality: config.PBSPro, Server: "srv.example.com"}, Stdout: &out, Stderr: &errb}
		f := &fakeServer{err: c.err}
		rc := run(env, c.args, func() (client, error) { return f, nil })
		if rc != c.rc || errb.String() != c.stderr || (len(f.calls) == 1) != c.sent {
			t.Errorf("%s: rc %d stderr %q calls %v", c.name, rc, errb.String(), f.calls)
		}
	}
}
