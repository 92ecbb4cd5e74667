package filter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExecOutcomes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "job.json")
	os.WriteFile(file, []byte("{}"), 0o644)
	for _, tc := range []struct {
		name, body string
		timeout    time.Duration
		want       Outcome
		code       int
		reason     string
	}{
		{"zero", "exit 0\n", 0, Exited, 0, "exit 0"},
		{"three with stderr", "echo 'too big' >&2\necho second >&2\nexit 3\n", 0, Exited, 3, "exit 3: too big"},
		{"argv and env", `[ "$1" = "` + file + `" ] && [ "$PBS_FILTER_KIND" = test ] || exit 9` + "\nexit 7\n", 0, Exited, 7, "exit 7"},
		{"killed by a signal", "kill -9 $$\n", 0, Exited, 137, "exit 137"},
		{"timeout", "echo slow >&2\nsleep 30\n", 300 * time.Millisecond, TimedOut, 0, "timed out after 300ms: slow"},
		// A helper that keeps stderr open must not keep the run going.
		{"timeout with a child", "(sleep 30) &\nsleep 30\n", 300 * time.Millisecond, TimedOut, 0, "timed out after 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := script(t, dir, strings.ReplaceAll(tc.name, " ", "_"), tc.body)
			start := time.Now()
			r := Exec(context.Background(), Run{Program: p, File: file, Env: Env(EnvKind, "test"), Timeout: tc.timeout})
			if r.Outcome != tc.want || r.Code != tc.code || r.Reason() != tc.reason {
				t.Errorf("got outcome %d code %d reason %q, want %d %d %q", r.Outcome, r.Code, r.Reason(), tc.want, tc.code, tc.reason)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
	r := Exec(context.Background(), Run{Program: filepath.Join(dir, "missing"), File: file})
	if r.Outcome != NotFound || r.Reason() != "not found" {
		t.Errorf("missing program: %d %q", r.Outcome, r.Reason())
	}
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("exit 0\n"), 0o644)
	r = Exec(context.Background(), Run{Program: plain, File: file})
	if r.Outcome != Unrunnable || !strings.Contains(r.Reason(), "permission denied") {
		t.Errorf("not executable: %d %q", r.Outcome, r.Reason())
	}
}

// The chain stops at the first refusal; Revert calls those before it in
// reverse order with --revert.
func TestChainAndRevert(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	var progs []string
	for i, code := range []string{"0", "0", "5", "0"} {
		name := string(rune('a' + i))
		progs = append(progs, script(t, dir, name, `echo "`+name+` $2" >> `+log+"\nexit "+code+"\n"))
	}
	c := Chain{Programs: progs}
	results, ref := c.Run(context.Background(), "/dev/null", func(i int, r Result) error {
		if r.Exit0() {
			return nil
		}
		return &Refusal{Result: r}
	})
	if ref == nil || ref.Index != 2 || len(results) != 3 {
		t.Fatalf("refusal %+v after %d results", ref, len(results))
	}
	if got := ref.Error(); got != "filter "+progs[2]+": exit 5" {
		t.Errorf("refusal message %q", got)
	}
	c.Revert(context.Background(), "/dev/null", ref.Index)
	b, _ := os.ReadFile(log)
	if got, want := string(b), "a \nb \nc \nb --revert\na --revert\n"; got != want {
		t.Errorf("calls:\n%s\nwant:\n%s", got, want)
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"\n\n  reason  \nx":      "reason",
		"a\tb\x01c":              "a?b?c",
		strings.Repeat("é", 150): strings.Repeat("é", 100) + "...",
	} {
		if got := firstLine([]byte(in)); got != want {
			t.Errorf("firstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
