package pidlock

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLock: the holder's pid is in the file; a second taker is told who
// holds it; a released lock can be taken again.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	release, err := Lock(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q", b)
	}
	var held *HeldError
	if _, err := Lock(path, 0); !errors.As(err, &held) || held.PID != strconv.Itoa(os.Getpid()) {
		t.Errorf("second Lock: %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	release()
	again, err := Lock(path, 0)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
}
