package display

import (
	"bytes"
	"testing"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	if got := render(t, func(b *bytes.Buffer) error { return AltQueueTable(b, nil, torque()) }); got != "" {
		t.Errorf("no queues printed %q", got)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	if Version(config.PBSPro) != "pbs_version = 23.06.06" || Version(config.Torque) != "Version: 6.1.3" {
		t.Errorf("versions: %q %q", Version(config.PBSPro), Version(config.Torque))
	}
}
