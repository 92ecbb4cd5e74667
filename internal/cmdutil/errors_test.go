package cmdutil

import (
	"errors"
	"testing"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

func TestJobError(t *testing.T) {
	unk := &proto.Error{Code: proto.PBSE_UNKJOBID, Text: "Unknown Job Id"}
	tests := []struct {
		p    config.Personality
		err  error
		id   string
		want string
		code proto.Code
	}{
		{config.PBSPro, unk, "9.srv", "Unknown Job Id", proto.PBSE_UNKJOBID},
		{config.Torque, unk, "9.srv", "Unknown Job Id Error", proto.PBSE_UNKJOBID},
		{config.PBSPro, &proto.Error{Code: proto.PBSE_UNKJOBID, Text: "Unknown Job Id 9.srv"}, "9.srv", "Unknown Job Id", proto.PBSE_UNKJOBID},
		{config.Torque, &proto.Error{Code: proto.PBSE_UNKJOBID}, "9.srv", "Unknown Job Id Error", proto.PBSE_UNKJOBID},
		{config.PBSPro, &proto.Error{Code: proto.PBSE_PERM, Text: "Unauthorized Request "}, "9.srv", "Unauthorized Request", proto.PBSE_PERM},
		{config.Torque, &proto.Error{Code: proto.PBSE_HISTJOBID, Text: "Job has finished"}, "9.srv", "Job has finished", proto.PBSE_HISTJOBID},
	}
	for _, tt := range tests {
		var pe *proto.Error
		if !errors.As(JobError(tt.p, tt.err, tt.id), &pe) || pe.Text != tt.want || pe.Code != tt.code {
			t.Errorf("%s %v: got %+v, want %q code %d", tt.p, tt.err, pe, tt.want, tt.code)
		}
	}
	plain := errors.New("connection refused")
	if JobError(config.PBSPro, plain, "1") != plain {
		t.Error("an error without a code must pass through")
	}
}

func TestFullJobID(t *testing.T) {
	for in, want := range map[string]string{
		"123": "123.srv", "123[]": "123[].srv", "123[4]": "123[4].srv", "123.other": "123.other",
		"workq": "workq", "12a": "12a", "123[x]": "123[x]", "": "",
	} {
		if got := FullJobID(in, "srv"); got != want {
			t.Errorf("FullJobID(%q) = %q, want %q", in, got, want)
		}
	}
}
