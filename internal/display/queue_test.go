package display

import (
	"bytes"
	"errors"
	"testing"

	"gopbs/internal/config"
	"gopbs/proto"
)

const counts1 = "Transit:0 Queued:1 Held:0 Waiting:0 Running:1 Exiting:0 Begun:0 "

func queues() []proto.Status {
	return []proto.Status{
		job("workq", "queue_type", "Execution", "total_jobs", "3", "state_count", counts1,
			"resources_max.walltime", "24:00:00", "enabled", "True", "started", "True"),
		job("averyveryverylongqueue", "queue_type", "Route", "total_jobs", "123456",
			"state_count", "Transit:0 Queued:123456 Held:2 Waiting:0 Running:0 Exiting:0 Begun:0 ",
			"max_running", "10", "enabled", "False", "started", "False", "resources_max.mem", "16000mb"),
	}
}

func TestQueueTable(t *testing.T) {
	got := render(t, func(b *bytes.Buffer) error { return QueueTable(b, queues(), pro()) })
	check(t, got, lines(
		"Queue              Max   Tot Ena Str   Que   Run   Hld   Wat   Trn   Ext Type",
		"---------------- ----- ----- --- --- ----- ----- ----- ----- ----- ----- ----",
		"workq                0     3 yes yes     1     1     0     0     0     0 Exe*",
		"averyveryverylo*    10 1234*  no  no 1234*     0     2     0     0     0 Rou*",
	))
	got = render(t, func(b *bytes.Buffer) error { return QueueTable(b, queues(), torque()) })
	check(t, got, lines(
		"Queue              Max    Tot   Ena   Str   Que   Run   Hld   Wat   Trn   Ext T   Cpt",
		"----------------   ---   ----    --    --   ---   ---   ---   ---   ---   --- -   ---",
		"workq                0      3   yes   yes     1     1     0     0     0     0 E     0",
		"averyveryverylon    10 123456    no    no 12345     0     2     0     0     0 R     0",
	))
	if got := render(t, func(b *bytes.Buffer) error { return QueueTable(b, nil, pro()) }); got != "" {
		t.Errorf("no queues printed %q", got)
	}
}

func TestServerTable(t *testing.T) {
	s := []proto.Status{job("srv", "server_state", "Active", "total_jobs", "3", "state_count", counts1)}
	got := render(t, func(b *bytes.Buffer) error { return ServerTable(b, s, pro()) })
	check(t, got, lines(
		"Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status",
		"---------------- ----- ----- ----- ----- ----- ----- ----- ----- -----------",
		"srv                  0     3     1     1     0     0     0     0 Active    |",
	))
	got = render(t, func(b *bytes.Buffer) error { return ServerTable(b, s, torque()) })
	check(t, got, lines(
		"Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext   Com Status    |",
		"----------------   ---   ---   ---   ---   ---   ---   ---   ---   --- ----------",
		"srv                  0     3     1     1     0     0     0     0     0 Active    |",
	))
}

func TestAltQueueTable(t *testing.T) {
	got := render(t, func(b *bytes.Buffer) error { return AltQueueTable(b, queues(), pro()) })
	check(t, got, lines(
		"",
		"server: srv",
		"",
		"Queue            Memory CPU Time Walltime Node   Run   Que   Lm  State",
		"---------------- ------ -------- -------- ---- ----- ----- ----  -----",
		"workq              --      --    24:00:00  --      1     1   --   E R",
		"averyveryverylon   16gb    --       --     --      0 123458   10   D S",
		"                                               ----- -----",
		"                                                   1 123459",
	))
	got = render(t, func(b *bytes.Buffer) error { return AltQueueTable(b, queues()[:1], torque()) })
	check(t, got, lines(
		"",
		"server: srv",
		"",
		"Queue            Memory CPU Time Walltime Node  Run Que Lm  State",
		"---------------- ------ -------- -------- ----  --- --- --  -----",
		"workq              --      --    24:00:00   --    1   1 --   E R",
		"                                               ----- -----",
		"                                                   1     1",
	))
}

func TestAltQueueTableEmpty(t *testing.T) {
	if got := render(t, func(b *bytes.Buffer) error { return AltQueueTable(b, nil, torque()) }); got != "" {
		t.Errorf("no queues printed %q", got)
	}
}

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

func TestVersion(t *testing.T) {
	if Version(config.PBSPro) != "pbs_version = 23.06.06" || Version(config.Torque) != "Version: 6.1.3" {
		t.Errorf("versions: %q %q", Version(config.PBSPro), Version(config.Torque))
	}
}
