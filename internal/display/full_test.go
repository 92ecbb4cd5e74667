package display

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
)

const longVars = "PBS_O_HOME=/home/alice,PBS_O_LOGNAME=alice,PBS_O_PATH=/usr/bin:/bin," +
	"PBS_O_SHELL=/bin/bash,PBS_O_WORKDIR=/home/alice/w,PBS_O_SYSTEM=Linux,PBS_O_QUEUE=workq,PBS_O_HOST=submithost"

func TestFullJobs(t *testing.T) {
	t.Parallel()
	j := finishedJob()
	j.Attrs = append(j.Attrs, attr("Variable_List", longVars), attr("exec_port", "15003"))
	tests := []struct {
		name string
		opt  func() Options
		want string
	}{
		{"pbspro", pro, lines(
			"Job Id: 3.srv",
			"    Job_Name = sleep",
			"    Job_Owner = carol@h",
			"    resources_used.cput = 00:01:02",
			"    job_state = F",
			"    queue = workq",
			"    stime = Mon Jan  1 00:01:00 2024",
			"    Exit_status = 0",
			"    Variable_List = PBS_O_HOME=/home/alice,PBS_O_LOGNAME=alice,",
			"\tPBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/bash,",
			"\tPBS_O_WORKDIR=/home/alice/w,PBS_O_SYSTEM=Linux,PBS_O_QUEUE=workq,",
			"\tPBS_O_HOST=submithost",
			"    exec_port = 15003",
			"",
		)},
		{"torque renames, shows C and hides exec_port", torque, lines(
			"Job Id: 3.srv",
			"    Job_Name = sleep",
			"    Job_Owner = carol@h",
			"    resources_used.cput = 00:01:02",
			"    job_state = C",
			"    queue = workq",
			"    start_time = Mon Jan  1 00:01:00 2024",
			"    exit_status = 0",
			"    Variable_List = PBS_O_HOME=/home/alice,PBS_O_LOGNAME=alice,",
			"\tPBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/bash,",
			"\tPBS_O_WORKDIR=/home/alice/w,PBS_O_SYSTEM=Linux,PBS_O_QUEUE=workq,",
			"\tPBS_O_HOST=submithost",
			"",
		)},
		{"-1 does not wrap", func() Options { o := torque(); o.OneLine = true; return o }, lines(
			"Job Id: 3.srv",
			"    Job_Name = sleep",
			"    Job_Owner = carol@h",
			"    resources_used.cput = 00:01:02",
			"    job_state = C",
			"    queue = workq",
			"    start_time = Mon Jan  1 00:01:00 2024",
			"    exit_status = 0",
			"    Variable_List = "+longVars,
			"",
		)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, func(b *bytes.Buffer) error { return FullJobs(b, []proto.Status{j}, tt.opt()) })
			check(t, got, tt.want)
		})
	}
}

func TestFullJobsBlocksAndZone(t *testing.T) {
	t.Parallel()
	o := pro()
	o.Loc = time.FixedZone("X", 3600)
	got := render(t, func(b *bytes.Buffer) error { return FullJobs(b, threeJobs(), o) })
	blocks := strings.Split(strings.TrimSuffix(got, "\n\n"), "\n\n")
	if len(blocks) != 3 {
		t.Fatalf("got %d blocks split on a blank line, want 3:\n%s", len(blocks), got)
	}
	for i, b := range blocks {
		if !strings.HasPrefix(b, "Job Id: ") {
			t.Errorf("block %d does not start with Job Id: %q", i, b)
		}
	}
	if !strings.Contains(got, "    ctime = Mon Jan  1 01:00:00 2024\n") {
		t.Errorf("ctime not shown in the given zone:\n%s", got)
	}
	// pysqa relies on this order.
	iName, iOwner, iState, iQueue := strings.Index(got, "Job_Name"), strings.Index(got, "Job_Owner"),
		strings.Index(got, "job_state"), strings.Index(got, "    queue")
	if !(iName < iOwner && iOwner < iState && iState < iQueue) {
		t.Errorf("attribute order broken: %d %d %d %d", iName, iOwner, iState, iQueue)
	}
}

func TestAttrLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, attr, value string
		limit             int
		oneLine           bool
		want              string
	}{
		{"short", "queue", "workq", 78, false, "    queue = workq\n"},
		{"a long part is broken at the limit", "comment", strings.Repeat("x", 100), 78, false,
			"    comment = " + strings.Repeat("x", 65) + "\n\t" + strings.Repeat("x", 35) + "\n"},
		{"no line holding only a TAB", "comment", strings.Repeat("y", 65), 78, false,
			"    comment = " + strings.Repeat("y", 65) + "\n"},
		{"empty list items are kept", "Variable_List", "A=1,,B=2,", 78, false, "    Variable_List = A=1,,B=2,\n"},
		{"newlines and controls stay on the line", "comment", "one\ntwo\x01\x7f", 78, false, "    comment = one\\ntwo^A^?\n"},
		{"one line", "comment", strings.Repeat("z", 100), 78, true, "    comment = " + strings.Repeat("z", 100) + "\n"},
		{"breaks fall between runes", "c", strings.Repeat("é", 80), 78, false,
			"    c = " + strings.Repeat("é", 71) + "\n\t" + strings.Repeat("é", 9) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AttrLine(tt.attr, tt.value, tt.limit, tt.oneLine); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestFullQueuesAndServers(t *testing.T) {
	t.Parallel()
	q := job("workq", "queue_type", "Execution", "total_jobs", "3", "enabled", "True", "started", "True",
		"resources_max.walltime", "24:00:00")
	got := render(t, func(b *bytes.Buffer) error { return FullQueues(b, []proto.Status{q}, pro()) })
	check(t, got, lines(
		"Queue: workq",
		"    queue_type = Execution",
		"    total_jobs = 3",
		"    enabled = True",
		"    started = True",
		"    resources_max.walltime = 24:00:00",
		"",
	))
	s := job("srv", "server_state", "Active", "scheduling", "True")
	got = render(t, func(b *bytes.Buffer) error { return FullServers(b, []proto.Status{s}, torque()) })
	check(t, got, lines(
		"Server: srv",
		"    server_state = Active",
		"    scheduling = True",
		"",
	))
}

func TestDSV(t *testing.T) {
	t.Parallel()
	j := job("1.srv", "Job_Name", "a|b", "comment", "x\\y\nz", "ctime", jan1)
	got := render(t, func(b *bytes.Buffer) error { return DSV(b, "Job Id: ", []proto.Status{j}, true, pro()) })
	want := `Job Id: 1.srv|Job_Name=a\|b|comment=x\\y\nz|ctime=Mon Jan  1 00:00:00 2024` + "\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
