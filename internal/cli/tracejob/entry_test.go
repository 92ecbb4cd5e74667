package tracejob

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLines(t *testing.T) {
	utc := time.UTC
	tests := []struct {
		line, id, want string
		ok             bool
	}{
		{"2026-11-24T07:55:03.365Z [INFO]  pbs_server: job queued: job=0.vm owner=root@vm queue=workq", "0.vm", "job queued: owner=root@vm queue=workq", true},
		{"2026-11-24T07:55:03.365Z [WARN]  pbs_server: job start failed: job=0.vm node=n1 error=\"a  b\"", "0.vm", "job start failed: node=n1 error=\"a  b\"", true},
		{"2026-11-24T07:55:03.365Z [INFO]  pbs_mom: job ended: job=10.vm exit_status=0", "0.vm", "", false},
		{"2026-11-24T07:55:03.365Z [INFO]  pbs_mom: job ended: job=0.vmx exit_status=0", "0.vm", "", false},
		{"2026-11-24T07:55:03.365Z [INFO]  pbs_mom: x: parent_job=0.vm", "0.vm", "", false},
		{"garbage job=0.vm", "0.vm", "", false},
		{"", "0.vm", "", false},
	}
	for _, tt := range tests {
		_, got, ok := logLine(tt.line, tt.id, utc)
		if ok != tt.ok || got != tt.want {
			t.Errorf("logLine(%q) = %q, %v; want %q, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
	at, text, ok := acctLine("11/24/2026 07:55:03;E;0.vm;user=root Exit_status=0 ", "0.vm", utc)
	if !ok || text != "E user=root Exit_status=0" || !at.Equal(time.Date(2026, 11, 24, 7, 55, 3, 0, utc)) {
		t.Errorf("acctLine: %v %q %v", at, text, ok)
	}
	for _, bad := range []string{"11/24/2026 07:55:03;E;10.vm;x=1", "11/24/2026;E;0.vm", "13/40/2026 07:55:03;E;0.vm;x", "11/24/2026 07:55:03;EE;0.vm;x"} {
		if _, _, ok := acctLine(bad, "0.vm", utc); ok {
			t.Errorf("acctLine(%q) accepted", bad)
		}
	}
}

func FuzzLines(f *testing.F) {
	f.Add("2026-11-24T07:55:03.365Z [INFO]  pbs_server: job queued: job=0.vm owner=root@vm", "0.vm")
	f.Add("11/24/2026 07:55:03;E;0.vm;user=root", "0.vm")
	f.Fuzz(func(t *testing.T, line, id string) {
		if _, text, ok := logLine(line, id, time.UTC); ok && strings.Contains(text, "\n") {
			t.Fatal("a message with a line break")
		}
		acctLine(line, id, time.UTC)
	})
}

func TestRun(t *testing.T) {
	home := t.TempDir()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	write := func(dir, day, text string) {
		os.MkdirAll(filepath.Join(home, dir), 0o755)
		os.WriteFile(filepath.Join(home, dir, day), []byte(text), 0o644)
	}
	write("server_logs", "20261123", "2026-11-23T23:59:58.000Z [INFO]  pbs_server: job queued: job=7.srv queue=workq\n")
	write("server_logs", "20261124", "2026-11-24T00:00:05.100Z [INFO]  pbs_server: job requeued: job=7.srv reason=\"node down\"\n2026-11-24T00:00:09.000Z [INFO]  pbs_server: job ended: job=7.srv exit_status=0\n2026-11-24T00:00:09.000Z [INFO]  pbs_server: job ended: job=17.srv exit_status=0\n")
	write("mom_logs", "20261124", "2026-11-24T00:00:01.000Z [INFO]  pbs_mom: job started: job=7.srv run=1\n2026-11-24T00:00:06.000Z [INFO]  pbs_mom: job started: job=7.srv run=2\n")
	write("sched_logs", "20261124", "2026-11-24T00:00:00.500Z [INFO]  pbs_sched: job deleted: it can never run: job=8.srv\n")
	write("server_priv/accounting", "20261124", "11/24/2026 00:00:09;E;7.srv;Exit_status=0 run_count=2 \n")
	tests := []struct {
		args []string
		code int
		want []string
		not  []string
	}{
		{[]string{"-p", home, "-n", "2", "7.srv"}, 0, []string{
			"Job: 7.srv",
			"11/23/2026 23:59:58  S    job queued: queue=workq",
			"11/24/2026 00:00:01  M    job started: run=1",
			"11/24/2026 00:00:05  S    job requeued: reason=\"node down\"",
			"11/24/2026 00:00:06  M    job started: run=2",
			"11/24/2026 00:00:09  S    job ended: exit_status=0",
			"11/24/2026 00:00:09  A    E Exit_status=0 run_count=2",
		}, []string{"17.srv", "8.srv"}},
		// Today only, no mom logs, no accounting.
		{[]string{"-p", home, "-m", "-a", "7.srv"}, 0, []string{"job requeued"}, []string{"job queued", "M  ", "A  "}},
		{[]string{"-p", home, "-n", "x", "7.srv"}, 2, nil, nil},
		{[]string{"-p", home}, 2, nil, nil},
		{[]string{"-p", home, "99.srv"}, 1, nil, nil},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := run(tt.args, &out, &errb, now)
		if code != tt.code {
			t.Errorf("tracejob %v: exit %d, want %d\n%s%s", tt.args, code, tt.code, out.String(), errb.String())
			continue
		}
		text := out.String()
		last := -1
		for _, w := range tt.want {
			i := strings.Index(text, w)
			if i < 0 || i < last {
				t.Errorf("tracejob %v: %q missing or out of order in\n%s", tt.args, w, text)
			}
			last = i
		}
		for _, n := range tt.not {
			if strings.Contains(text, n) {
				t.Errorf("tracejob %v: %q should not be in\n%s", tt.args, n, text)
			}
		}
	}
}
