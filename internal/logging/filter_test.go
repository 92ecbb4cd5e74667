package logging

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/logging/logclass"
)

func bufLogger() (*Filtered, *bytes.Buffer) {
	var buf bytes.Buffer
	l := hclog.New(&hclog.LoggerOptions{Name: "pbs_sched", Level: hclog.Trace, Output: &buf})
	return NewFiltered(l), &buf
}

// Every line gets a class, by what it names, else its level and keys.
func TestClassOf(t *testing.T) {
	tests := []struct {
		level hclog.Level
		args  []any
		want  logclass.Class
	}{
		{hclog.Info, nil, logclass.Sched},
		{hclog.Warn, nil, logclass.Sched},
		{hclog.Error, nil, logclass.Error},
		{hclog.Error, []any{"job", "1.s"}, logclass.Error},
		{hclog.Debug, nil, logclass.Debug},
		{hclog.Trace, nil, logclass.Debug2},
		{hclog.Trace, []any{"job", "1.s"}, logclass.Debug2},
		{hclog.Info, []any{"job", "1.s"}, logclass.Job},
		{hclog.Debug, []any{"nodes", "n1", "job", "1.s"}, logclass.Job},
		{hclog.Info, []any{"jobs", 3}, logclass.Sched},
		{hclog.Warn, []any{logclass.Key, logclass.Admin}, logclass.Admin},
		{hclog.Error, []any{"job", "1.s", logclass.Key, logclass.JobUsage}, logclass.JobUsage},
		{hclog.Info, []any{logclass.Key, "not a class"}, logclass.Sched},
	}
	for _, tt := range tests {
		if got := ClassOf(tt.level, tt.args); got != tt.want {
			t.Errorf("ClassOf(%v, %v) = %v, want %v", tt.level, tt.args, got, tt.want)
		}
	}
}

// log_filter 256 drops the DEBUG2 lines and nothing else; 8 drops the
// lines about single jobs, however they name the job; the mask is shared
// by derived loggers and changes take effect at once.
func TestFilteredMask(t *testing.T) {
	f, buf := bufLogger()
	policy := f.Named("policy")
	perJob := f.With("job", "7.s")
	conn := f.Named("conn").With(logclass.Key, logclass.Security)
	emit := func() {
		f.Trace("trace line")
		f.Debug("debug line")
		f.Info("cycle line", "jobs", 2)
		f.Info("job line", "job", "1.s")
		policy.Debug("policy job line", "job", "2.s")
		perJob.Warn("with job line")
		conn.Info("conn line")
		f.Error("error line")
	}
	lines := func() string { s := buf.String(); buf.Reset(); return s }
	has := func(out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("missing %q in:\n%s", w, out)
			}
		}
	}
	hasNot := func(out string, not ...string) {
		t.Helper()
		for _, w := range not {
			if strings.Contains(out, w) {
				t.Errorf("%q should be filtered out:\n%s", w, out)
			}
		}
	}

	emit()
	out := lines()
	has(out, "trace line: class=debug2", "debug line: class=debug", "cycle line: jobs=2 class=sched",
		"job line: job=1.s class=job", "pbs_sched.policy: policy job line: job=2.s class=job",
		"with job line: job=7.s class=job", "pbs_sched.conn: conn line: class=security", "error line: class=error")
	if strings.Count(out, "class=") != strings.Count(out, "\n") {
		t.Errorf("a line without its class, or with two:\n%s", out)
	}

	f.SetMask(256)
	emit()
	out = lines()
	hasNot(out, "trace line")
	has(out, "debug line", "cycle line", "job line", "conn line", "error line")

	policy.(*Filtered).SetMask(8) // any derived logger sets the one mask
	if f.Mask() != 8 {
		t.Fatalf("mask %d after setting it through a derived logger", f.Mask())
	}
	emit()
	out = lines()
	hasNot(out, "job line", "policy job line", "with job line")
	has(out, "trace line", "debug line", "cycle line", "conn line", "error line")

	f.SetMask(uint32(logclass.Security | logclass.Sched | logclass.Error))
	emit()
	out = lines()
	hasNot(out, "conn line", "cycle line", "error line")
	has(out, "trace line", "job line")

	f.SetMask(0)
	emit()
	if n := strings.Count(lines(), "\n"); n != 8 {
		t.Errorf("%d lines with an empty mask, want 8", n)
	}
}

func TestDescribe(t *testing.T) {
	for mask, want := range map[uint32]string{
		0: "none", 256: "debug2", 8: "job", 0x1ff: "error,system,admin,job,job_usage,security,sched,debug,debug2",
		0x1000 | 1: "error,0x1000",
	} {
		if got := logclass.Describe(mask); got != want {
			t.Errorf("Describe(%d) = %q, want %q", mask, got, want)
		}
	}
	if logclass.Class(0x200).String() != "0x200" {
		t.Error("an unnamed bit is shown in hex")
	}
}
