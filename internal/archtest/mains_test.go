package archtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxMainLines bounds a binary's main.go (lines of code, comments aside):
// enough to hand a library's Main its name and policy, too few for logic.
const maxMainLines = 20

// Every binary is cmd/<name>/ holding only main.go (and doc.go, the
// command's documentation): its logic, and the tests of it, live in a
// package (internal/cli/<name>, internal/serverd, internal/momd, sched).
func TestMainsAreThin(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("..", "..", "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 30 {
		t.Fatalf("cmd/ holds %d binaries: the walk missed them", len(dirs))
	}
	for _, d := range dirs {
		dir := filepath.Join("..", "..", "cmd", d.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Name() != "main.go" && f.Name() != "doc.go" {
				t.Errorf("cmd/%s/%s: a binary's folder holds main.go and doc.go only; its logic goes to a package", d.Name(), f.Name())
			}
		}
		src, err := os.ReadFile(filepath.Join(dir, "main.go"))
		if err != nil {
			t.Errorf("cmd/%s: %v", d.Name(), err)
			continue
		}
		code := 0
		for _, line := range strings.Split(string(src), "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "//") {
				code++
			}
		}
		if code > maxMainLines {
			t.Errorf("cmd/%s/main.go has %d lines of code (at most %d): its logic goes to a package", d.Name(), code, maxMainLines)
		}
	}
}
