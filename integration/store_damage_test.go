package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// A store cut short (a disk that lost its tail, a copy interrupted) stops
// the server with a message naming the file, never a goroutine dump, and
// the file is left as it was for the admin to inspect or restore.
func TestTruncatedStoreRefusesToStart(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	for i := 0; i < 300; i++ {
		c.Submit("#!/bin/sh\necho " + strings.Repeat("x", 200) + "\n")
	}
	c.KillServer(syscall.SIGTERM)
	path := filepath.Join(c.Home, "server_priv", "serverdb")
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []int{len(whole) / 2, len(whole) / 3, 4096 + 100} {
		if err := os.WriteFile(path, whole[:keep], 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := c.StartServerExpectFailure(20 * time.Second)
		if err == nil {
			t.Fatalf("pbs_server started on a store cut to %d of %d bytes:\n%s", keep, len(whole), out)
		}
		if !strings.Contains(out, path) || strings.Contains(out, "goroutine ") || strings.Contains(out, "panic") {
			t.Fatalf("store cut to %d bytes: the refusal must name %s without a crash dump:\n%s", keep, path, out)
		}
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got, whole[:keep]) {
			t.Fatalf("store cut to %d bytes was modified by the failed start", keep)
		}
	}
}
