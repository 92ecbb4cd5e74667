package core

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// purePackages must decide from their inputs alone: the core, the
// sched_priv parsers whose types policies use (their file-system side is
// sched/schedpriv/privdir) and the job sort formula they carry, and the
// policies built on the core (each policy package is added here as it
// moves onto the core).
var purePackages = []string{"github.com/gopbs/gopbs/sched/core", "github.com/gopbs/gopbs/sched/schedpriv", "github.com/gopbs/gopbs/sched/fifo", "github.com/gopbs/gopbs/sched/fairshare", "github.com/gopbs/gopbs/sched/formula", "github.com/gopbs/gopbs/sched/sim"}

// forbiddenImports reach outside a process's inputs: sockets, files,
// processes, process-wide settings, the wire protocol, loggers that write.
var forbiddenImports = map[string]bool{
	"os": true, "os/exec": true, "os/signal": true, "net": true, "net/http": true, "syscall": true,
	"io/ioutil": true, "runtime/debug": true, "math/rand": true, "math/rand/v2": true, "log": true,
	"github.com/fsnotify/fsnotify": true, "github.com/hashicorp/go-hclog": true, "github.com/gopbs/gopbs/proto": true,
}

// clockCalls read or wait on the clock; time.Time and time.Duration as
// values are fine.
var clockCalls = []string{"time.Now(", "time.Since(", "time.Until(", "time.Sleep(", "time.After(", "time.Tick(", "time.NewTimer(", "time.NewTicker(", "time.AfterFunc("}

// TestPurity fails when a pure package, or a package of this module it
// builds on, imports something that could reach outside its inputs, or
// calls the clock.
func TestPurity(t *testing.T) {
	t.Parallel()
	for _, pkg := range purePackages {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .Imports \" \"}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.SplitN(line, "\t", 3)
			if len(f) < 3 || !strings.HasPrefix(f[0], "github.com/gopbs/gopbs/") {
				continue // the standard library and modules are not ours to check
			}
			for _, imp := range strings.Fields(f[2]) {
				if forbiddenImports[imp] {
					t.Errorf("%s (needed by %s) imports %s", f[0], pkg, imp)
				}
			}
			files, _ := filepath.Glob(filepath.Join(f[1], "*.go"))
			for _, file := range files {
				if strings.HasSuffix(file, "_test.go") {
					continue
				}
				src, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				for _, call := range clockCalls {
					if strings.Contains(string(src), call) {
						t.Errorf("%s (needed by %s) calls %s", file, pkg, strings.TrimSuffix(call, "("))
					}
				}
			}
		}
	}
}
