package shepherd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLease(t *testing.T) {
	dir := t.TempDir()
	path := LeasePath(filepath.Join(dir, "jobs"))
	if path != filepath.Join(dir, fileLease) {
		t.Fatalf("lease path %s", path)
	}
	for _, tc := range []struct {
		name    string
		setup   func()
		lapsed  bool
		comment string
	}{
		{"no file: no lease yet", func() { os.Remove(path) }, false, ""},
		{"no lease", func() { WriteLease(path, 0) }, false, ""},
		{"in force", func() { WriteLease(path, BootNow()+time.Minute) }, false, ""},
		{"lapsed", func() { WriteLease(path, BootNow()-time.Millisecond) }, true, "lost contact with the server"},
		{"garbage is lapsed", func() { os.WriteFile(path, []byte("soon\n"), 0o644) }, true, "cannot be read"},
		{"negative is lapsed", func() { os.WriteFile(path, []byte("-5\n"), 0o644) }, true, "cannot be read"},
	} {
		tc.setup()
		lapsed, why := leaseLapsed(path)
		if lapsed != tc.lapsed || !strings.Contains(why, tc.comment) {
			t.Errorf("%s: lapsed=%v %q, want %v %q", tc.name, lapsed, why, tc.lapsed, tc.comment)
		}
	}
}
