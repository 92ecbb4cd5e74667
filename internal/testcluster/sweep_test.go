package testcluster

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A build directory of a process that is gone is removed at the next
// build; a live process's is kept.
func TestSweepBuilds(t *testing.T) {
	prefix := "gopbs-sweep-test-" + strconv.Itoa(os.Getpid()) + "-"
	gone, err := os.MkdirTemp("", prefix+"2147483646-")
	if err != nil {
		t.Fatal(err)
	}
	live, err := os.MkdirTemp("", prefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(live)
	os.WriteFile(filepath.Join(gone, "pbs_server"), []byte("x"), 0o755)
	sweepBuilds(prefix)
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the build directory of a finished process is still there: %v", err)
		os.RemoveAll(gone)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("this process's build directory was removed: %v", err)
	}
}
