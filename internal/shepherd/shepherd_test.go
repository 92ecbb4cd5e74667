package shepherd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/proto"
)

func TestParseProcStat(t *testing.T) {
	line := "4242 (my (odd) prog) S 1 4240 4240 0 -1 4194560 100 0 0 0 150 50 10 5 20 0 1 0 12345 104857600 2560 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0"
	p, err := parseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != 4242 || p.PPID != 1 || p.PGRP != 4240 || p.Session != 4240 || p.CPUTicks != 215 || p.RSSPages != 2560 || p.VSize != 104857600 {
		t.Fatalf("parsed %+v", p)
	}
	for _, bad := range []string{"", "12 noparen", "x (a) S 1", "12 (a) S 1 2"} {
		if _, err := parseProcStat(bad); err == nil {
			t.Errorf("parseProcStat(%q) accepted", bad)
		}
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add("1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 1 2 3 4")
	f.Fuzz(func(t *testing.T, s string) {
		parseProcStat(s)
	})
}

func TestScaleSecs(t *testing.T) {
	for _, tt := range []struct {
		s    int64
		f    float64
		want int64
	}{{10, 1, 10}, {10, 0, 10}, {10, 1.5, 15}, {3, 0.5, 2}, {0, 2, 0}} {
		if got := ScaleSecs(tt.s, tt.f); got != tt.want {
			t.Errorf("scaleSecs(%d, %g) = %d, want %d", tt.s, tt.f, got, tt.want)
		}
	}
}

// A delete's kill delay reaches the shepherd in the delete marker (qdel
// -W, or the job's kill_delay); a marker without one (or an unreadable
// one) keeps the job's.
func TestDeleteDelay(t *testing.T) {
	dir := t.TempDir()
	def := 10 * time.Second
	for content, want := range map[string]time.Duration{
		"":     def,
		"0\n":  0,
		"45\n": 45 * time.Second,
		"-1\n": def,
		"x":    def,
	} {
		p := filepath.Join(dir, "delete")
		os.WriteFile(p, []byte(content), 0o600)
		if got := deleteDelay(p, def); got != want {
			t.Errorf("marker %q: %v, want %v", content, got, want)
		}
	}
	if got := deleteDelay(filepath.Join(dir, "none"), def); got != def {
		t.Errorf("no marker: %v", got)
	}
}

// A job with GPUs sees them, and only them, in CUDA_VISIBLE_DEVICES,
// whatever its submitter's environment said; a job without keeps the
// submitter's value.
func TestJobEnvGPUs(t *testing.T) {
	job := &proto.MomJob{JobID: "1.srv", VariableList: proto.EncodeVariableList([]proto.Var{{Name: "CUDA_VISIBLE_DEVICES", Value: "7"}})}
	usr := &asuser.Account{Name: "u", Home: "/home/u", Shell: "/bin/sh"}
	count := func(env []string) (n int, last string) {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "CUDA_VISIBLE_DEVICES="); ok {
				n, last = n+1, v
			}
		}
		return n, last
	}
	if n, v := count(jobEnv(job, usr, "/tmp", "/nodes", []int{1, 3})); n != 1 || v != "1,3" {
		t.Errorf("with GPUs 1 and 3: %d CUDA_VISIBLE_DEVICES, %q", n, v)
	}
	if n, v := count(jobEnv(job, usr, "/tmp", "/nodes", nil)); n != 1 || v != "7" {
		t.Errorf("without GPUs: %d CUDA_VISIBLE_DEVICES, %q", n, v)
	}
}

// A process that left its parent's session (setsid) is still below the
// parent: JobsProcesses and EscapedProcesses find it; an unknown pid (0)
// stands for no process, not for every child of the kernel.
func TestProcessesBelowAShepherd(t *testing.T) {
	proc, err := os.StartProcess("/bin/sleep", []string{"sleep", "30"}, &os.ProcAttr{Sys: &syscall.SysProcAttr{Setsid: true}})
	if err != nil {
		t.Skip(err)
	}
	defer func() { proc.Kill(); proc.Wait() }()
	me := os.Getpid()
	has := func(list []ProcStat) bool {
		for _, p := range list {
			if p.PID == proc.Pid {
				return true
			}
		}
		return false
	}
	if !has(JobsProcesses(map[int]bool{me: true})[me]) {
		t.Errorf("JobsProcesses misses child %d in a session of its own", proc.Pid)
	}
	if !has(EscapedProcesses(me)) {
		t.Errorf("EscapedProcesses misses child %d in a session of its own", proc.Pid)
	}
	if got := EscapedProcesses(0); len(got) != 0 {
		t.Errorf("EscapedProcesses(0) = %d processes, want none", len(got))
	}
	if got := Descendants(0); len(got) != 0 {
		t.Errorf("Descendants(0) = %d processes, want none", len(got))
	}
}
