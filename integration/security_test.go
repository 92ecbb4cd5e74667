package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// No user data reaches a shell: variable values and an output path full
// of shell syntax arrive as the literal text, and none of it is ever
// executed (SECURITY.md, "no user data through a shell"). A job name
// cannot hold shell syntax at all: qsub refuses it, as OpenPBS does.
func TestShellMetacharactersNeverExecuted(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	marker := filepath.Join(c.Home, "pwned")
	payloads := []string{
		"$(touch " + marker + ")",
		"`touch " + marker + "`",
		"x;touch " + marker,
		"x|touch " + marker,
		"x&&touch " + marker,
	}
	// Path components cannot hold '/', so the path's payloads are bare.
	outDir := filepath.Join(c.Home, "out dir;$(id)")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	outPath := filepath.Join(outDir, "-o `id`&x.txt")
	var vars []string
	for i, p := range payloads {
		vars = append(vars, "V"+string(rune('A'+i))+"="+strings.ReplaceAll(p, ",", `\,`))
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$PBS_JOBNAME\" \"$VA\" \"$VB\" \"$VC\" \"$VD\" \"$VE\"\n"
	if r := c.RunStdin(script, "qsub", "-N", "n$(touch "+marker+");`id`|x"); r.Code == 0 || !strings.Contains(r.Stderr, "illegal -N value") {
		t.Fatalf("qsub took a job name full of shell syntax: %s", r)
	}
	name := "n.1_x+y-z"
	id := c.Submit(script, "-N", name, "-v", strings.Join(vars, ","), "-o", outPath, "-j", "oe")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 20*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "0" {
		t.Fatalf("Exit_status %q", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a shell ran user data: the marker file exists")
	}
	out := readFile(t, outPath)
	want := append([]string{name}, payloads...)
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the job saw\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
}
