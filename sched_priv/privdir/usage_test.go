package privdir

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	schedpriv "gopbs/sched_priv"
)

func TestUsageFile(t *testing.T) {
	dir := t.TempDir()
	u, err := ReadUsageFile(dir)
	if err != nil || u == nil || len(u) != 0 {
		t.Fatalf("missing usage file: %v, %v; want empty usage", u, err)
	}
	first := schedpriv.Usage{"alice": 10, "bob": 20}
	if err := WriteUsageFile(dir, first); err != nil {
		t.Fatal(err)
	}
	second := schedpriv.Usage{"alice": 5, "carol\twith tab": 1}
	if err := WriteUsageFile(dir, second); err != nil {
		t.Fatal(err)
	}
	got, err := ReadUsageFile(dir)
	if err != nil || !maps.Equal(got, second) {
		t.Errorf("read back %v, %v; want %v", got, err, second)
	}
	fi, err := os.Stat(filepath.Join(dir, schedpriv.UsageFile))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	// A failed encode leaves the old file in place.
	if err := WriteUsageFile(dir, schedpriv.Usage{"": 1}); err == nil {
		t.Error("empty name should fail")
	}
	if got, _ := ReadUsageFile(dir); !maps.Equal(got, second) {
		t.Error("failed write changed the file")
	}
	// A damaged file is an error naming the path.
	os.WriteFile(filepath.Join(dir, schedpriv.UsageFile), []byte("gopbs-usage 9\n"), 0o644)
	if _, err := ReadUsageFile(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, schedpriv.UsageFile)+":1:") {
		t.Errorf("error %v should name the file", err)
	}
	// A directory that does not exist is an error, not empty usage.
	if err := WriteUsageFile(filepath.Join(dir, "missing"), first); err == nil {
		t.Error("writing into a missing directory should fail")
	}
}
