//go:build faultpoints

package fault

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A fault build's clock runs ahead by the duration in its file; a file
// that does not read leaves the offset as it was.
func TestClockAhead(t *testing.T) {
	t.Cleanup(func() { clockAhead.Store(0) })
	path := filepath.Join(t.TempDir(), "clock")
	for _, tc := range []struct {
		text string
		want time.Duration
	}{
		{"45s\n", 45 * time.Second},
		{"1h2m", time.Hour + 2*time.Minute},
		{"soon", time.Hour + 2*time.Minute}, // kept
		{"-3s", -3 * time.Second},
	} {
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		readClock(path)
		before := time.Now()
		got := Now().Sub(before)
		if got < tc.want || got > tc.want+time.Second {
			t.Errorf("after %q: Now is %v ahead, want %v", tc.text, got, tc.want)
		}
	}
	readClock(filepath.Join(t.TempDir(), "missing"))
	if d := time.Duration(clockAhead.Load()); d != -3*time.Second {
		t.Errorf("a missing file changed the offset to %v", d)
	}
}
