package qterm

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

func TestParse(t *testing.T) {
	cfg := &config.Config{Server: "head.example.org"}
	tests := []struct {
		args    []string
		want    proto.ShutdownRequest
		wantErr string
	}{
		{args: nil, want: proto.ShutdownRequest{Manner: proto.ShutQuick}},
		{args: []string{"-s"}, want: proto.ShutdownRequest{Manner: proto.ShutQuick, Scheduler: true}},
		{args: []string{"-ms"}, want: proto.ShutdownRequest{Manner: proto.ShutQuick, Scheduler: true, Moms: true}},
		{args: []string{"-t", "delay"}, want: proto.ShutdownRequest{Manner: proto.ShutDelay}},
		{args: []string{"-timmediate", "-m"}, want: proto.ShutdownRequest{Manner: proto.ShutImmediate, Moms: true}},
		{args: []string{"head"}, want: proto.ShutdownRequest{Manner: proto.ShutQuick}},
		{args: []string{"head.example.org"}, want: proto.ShutdownRequest{Manner: proto.ShutQuick}},
		{args: []string{"-t", "soon"}, wantErr: `illegal -t value: "soon"`},
		{args: []string{"-t"}, wantErr: "requires an argument -- 't'"},
		{args: []string{"-f"}, wantErr: "no failover server"},
		{args: []string{"-x"}, wantErr: "invalid option -- 'x'"},
		{args: []string{"other"}, wantErr: "other is not the configured server"},
		{args: []string{"head", "head"}, wantErr: "only one server"},
	}
	for _, tt := range tests {
		got, err := parse(tt.args, cfg)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parse(%q) error = %v, want it to contain %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parse(%q): %v", tt.args, err)
			continue
		}
		if *got != tt.want {
			t.Errorf("parse(%q) = %+v, want %+v", tt.args, *got, tt.want)
		}
	}
}

type fakeClient struct {
	got *proto.ShutdownRequest
	err error
}

func (f *fakeClient) Shutdown(req *proto.ShutdownRequest) error { f.got = req; return f.err }
func (f *fakeClient) Close() error                              { return nil }

func TestRunStatus(t *testing.T) {
	tests := []struct {
		args       []string
		serverErr  error
		wantStatus int
		wantStderr string
	}{
		{args: []string{"-s"}, wantStatus: 0},
		{args: []string{"-t", "never"}, wantStatus: 2, wantStderr: "usage: qterm"},
		{args: nil, serverErr: proto.NewError(proto.PBSE_PERM), wantStatus: int(proto.PBSE_PERM) % 256, wantStderr: "qterm: Unauthorized Request"},
		{args: nil, serverErr: errors.New("connection refused"), wantStatus: 1, wantStderr: "qterm: connection refused"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		env := &cmdutil.Env{Name: "qterm", Config: &config.Config{Server: "head"}, Stdout: &bytes.Buffer{}, Stderr: &stderr}
		fc := &fakeClient{err: tt.serverErr}
		status := run(env, tt.args, func() (client, error) { return fc, nil })
		if status != tt.wantStatus {
			t.Errorf("run(%q) = %d, want %d (stderr %q)", tt.args, status, tt.wantStatus, stderr.String())
		}
		if !strings.Contains(stderr.String(), tt.wantStderr) {
			t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.wantStderr)
		}
	}
}
