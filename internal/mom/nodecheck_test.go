package mom

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/testcluster"
)

func TestNodeCheckConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want NodeCheckConfig
		err  string
		warn string
	}{
		{"none", "", NodeCheckConfig{Every: 1}, "", ""},
		{"script alone runs every report", "$node_check_script /etc/pbs/check\n", NodeCheckConfig{Script: "/etc/pbs/check", Every: 1}, "", ""},
		{"torque's interval and events", "$node_check_script /c\n$node_check_interval 5,jobstart,jobend\n", NodeCheckConfig{Script: "/c", Every: 5, JobStart: true, JobEnd: true}, "", ""},
		{"blanks and order", "$node_check_script /c\n$node_check_interval jobend, 3\n", NodeCheckConfig{Script: "/c", Every: 3, JobEnd: true}, "", ""},
		{"events only: never periodically", "$node_check_script /c\n$node_check_interval jobstart\n", NodeCheckConfig{Script: "/c", JobStart: true}, "", ""},
		{"zero", "$node_check_script /c\n$node_check_interval 0\n", NodeCheckConfig{Script: "/c"}, "", ""},
		{"interval without a script", "$node_check_interval 2\n", NodeCheckConfig{Every: 2}, "", "does nothing without $node_check_script"},
		{"relative script", "$node_check_script check.sh\n", NodeCheckConfig{}, "line 1: $node_check_script \"check.sh\" is not an absolute path", ""},
		{"unknown event", "$node_check_interval 5,jobsuspend\n", NodeCheckConfig{}, "line 1: $node_check_interval \"5,jobsuspend\": \"jobsuspend\" is neither", ""},
		{"two numbers", "$node_check_interval 5,6\n", NodeCheckConfig{}, "want one number", ""},
		{"negative", "$node_check_interval -1\n", NodeCheckConfig{}, "neither a number", ""},
		{"too many", "$node_check_interval 10001\n", NodeCheckConfig{}, "from 0 to 10000", ""},
		{"empty item", "$node_check_interval 5,,jobend\n", NodeCheckConfig{}, "neither a number", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseWant(t, tt.in, tt.err)
			if c == nil {
				return
			}
			if c.NodeCheck != tt.want {
				t.Errorf("NodeCheck = %+v, want %+v", c.NodeCheck, tt.want)
			}
			if got := strings.Join(c.Warnings, "\n"); tt.warn != "" && !strings.Contains(got, tt.warn) || tt.warn == "" && got != "" {
				t.Errorf("warnings %q, want %q", got, tt.warn)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	t.Parallel()
	long := "ERROR " + strings.Repeat("é", healthMax)
	tests := []struct {
		name string
		run  shepherd.ProgramRun
		out  string
		want string
	}{
		{"passes", shepherd.ProgramRun{Found: true}, "all good\nEVENT: fine\n", ""},
		{"error line", shepherd.ProgramRun{Found: true}, "checking\nERROR: /scratch is full\nERROR: second\n", "ERROR: /scratch is full"},
		{"any case, as Torque 6", shepherd.ProgramRun{Found: true}, "error no ib\r\n", "error no ib"},
		{"not at a line's start", shepherd.ProgramRun{Found: true}, "no ERROR here\n", ""},
		{"error line wins over the exit status", shepherd.ProgramRun{Found: true, Code: 1}, "ERROR disk\n", "ERROR disk"},
		{"exit status", shepherd.ProgramRun{Found: true, Code: 3}, "", "node check /c exited 3"},
		{"refused", shepherd.ProgramRun{Found: true, Code: -1, Why: "refused: mode 0777 is writable by its group or others"}, "", "node check /c: refused: mode 0777 is writable by its group or others"},
		{"missing", shepherd.ProgramRun{}, "", "node check /c does not exist"},
		{"control characters", shepherd.ProgramRun{Found: true}, "ERROR\tbad\x1b[31m \xff\n", "ERROR bad [31m ?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verdict("/c", tt.run, []byte(tt.out)); got != tt.want {
				t.Errorf("verdict %q, want %q", got, tt.want)
			}
		})
	}
	if got := verdict("/c", shepherd.ProgramRun{Found: true}, []byte(long+"\n")); len(got) > healthMax || !strings.HasPrefix(long, got) || len(got) < healthMax-1 {
		t.Errorf("a long line gives %d bytes (%q...)", len(got), got[:20])
	}
}

// checkScript writes an executable /bin/sh program in dir.
func checkScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// The check runs as the prologue does: its exit status, its ERROR line
// on standard output (not standard error), a program writable by others
// refused, and a run past its limit killed with what it started.
func TestRunNodeCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if h, _ := runNodeCheck(checkScript(t, dir, "ok", "echo fine\necho ERROR on stderr >&2\nexit 0\n"), dir, time.Minute); h != "" {
		t.Errorf("passing check: %q", h)
	}
	if h, _ := runNodeCheck(checkScript(t, dir, "exit", "exit 4\n"), dir, time.Minute); h != "node check "+filepath.Join(dir, "exit")+" exited 4" {
		t.Errorf("failing check: %q", h)
	}
	if h, stderr := runNodeCheck(checkScript(t, dir, "error", "echo starting\necho 'ERROR: no /scratch'\necho why >&2\n"), dir, time.Minute); h != "ERROR: no /scratch" || stderr != "why" {
		t.Errorf("ERROR line: %q (stderr %q)", h, stderr)
	}
	loose := checkScript(t, dir, "loose", "exit 0\n")
	os.Chmod(loose, 0o757)
	if h, _ := runNodeCheck(loose, dir, time.Minute); !strings.Contains(h, "refused") || !strings.Contains(h, "writable by its group or others") {
		t.Errorf("check writable by others: %q", h)
	}
	if h, _ := runNodeCheck(filepath.Join(dir, "none"), dir, time.Minute); !strings.Contains(h, "does not exist") {
		t.Errorf("missing check: %q", h)
	}

	pids := filepath.Join(dir, "pids")
	start := time.Now()
	h, _ := runNodeCheck(checkScript(t, dir, "slow", "sleep 60 &\necho $! > "+pids+"\nsleep 60\n"), dir, 300*time.Millisecond)
	if !strings.Contains(h, "killed after running 300ms (the node check's time limit)") || time.Since(start) > 10*time.Second {
		t.Errorf("slow check after %v: %q", time.Since(start), h)
	}
	b, _ := os.ReadFile(pids)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the check's child pid: %q", b)
	}
	if !testcluster.WaitGone(pid, 5*time.Second) {
		t.Errorf("process %d the check started survived it", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func FuzzParseNodeCheckInterval(f *testing.F) {
	for _, s := range []string{"5", "5,jobstart,jobend", "jobend, 3", "jobstart", "0", "-1", "5,,x", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		every, _, _, err := parseNodeCheckInterval(s)
		if err == nil && (every < 0 || every > maxNodeCheckEvery) {
			t.Fatalf("%q accepted as %d", s, every)
		}
	})
}

func FuzzVerdict(f *testing.F) {
	f.Add([]byte("ok\n"), 0)
	f.Add([]byte("x\nERROR: disk\n"), 1)
	f.Add([]byte("error \xff\x00\n"), 0)
	f.Fuzz(func(t *testing.T, out []byte, code int) {
		v := verdict("/c", shepherd.ProgramRun{Found: true, Code: code}, out)
		if len(v) > healthMax || strings.ContainsAny(v, "\n\r\x00") || !utf8Valid(v) {
			t.Fatalf("verdict %q", v)
		}
		if v == "" && code != 0 {
			t.Fatalf("exit %d passed", code)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }
