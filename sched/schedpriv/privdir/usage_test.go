package privdir

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

func same(a, b *schedpriv.UsageState) bool {
	return a.LastDecay == b.LastDecay && maps.Equal(a.Entities, b.Entities) && maps.Equal(a.Jobs, b.Jobs)
}

func TestUsageFile(t *testing.T) {
	dir := t.TempDir()
	u, err := ReadUsageFile(dir)
	if err != nil || u == nil || len(u.Entities) != 0 {
		t.Fatalf("missing usage file: %v, %v; want empty usage", u, err)
	}
	first := &schedpriv.UsageState{Entities: schedpriv.Usage{"alice": 10, "bob": 20}}
	if err := WriteUsageFile(dir, first); err != nil {
		t.Fatal(err)
	}
	second := &schedpriv.UsageState{Entities: schedpriv.Usage{"alice": 5, "carol\twith tab": 1}, Jobs: map[string]float64{"7.srv": 30}, LastDecay: 99}
	if err := WriteUsageFile(dir, second); err != nil {
		t.Fatal(err)
	}
	got, err := ReadUsageFile(dir)
	if err != nil || !same(got, second) {
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
	if err := WriteUsageFile(dir, &schedpriv.UsageState{Entities: schedpriv.Usage{"": 1}}); err == nil {
		t.Error("empty name should fail")
	}
	if got, _ := ReadUsageFile(dir); !same(got, second) {
		t.Error("failed write changed the file")
	}
	// A damaged file is an error naming the path.
	os.WriteFile(filepath.Join(dir, schedpriv.UsageFile), []byte("gopbs-usage 9\n"), 0o644)
	if _, err := ReadUsageFile(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, schedpriv.UsageFile)+":1:") {
		t.Errorf("error %v should name the file", err)
	}
	// SetAsideUsageFile keeps the damaged file under another name.
	aside, err := SetAsideUsageFile(dir, time.Unix(1234, 0))
	if err != nil || aside != filepath.Join(dir, schedpriv.UsageFile+".damaged-1234") {
		t.Errorf("set aside: %q, %v", aside, err)
	}
	if data, _ := os.ReadFile(aside); string(data) != "gopbs-usage 9\n" {
		t.Errorf("set-aside file holds %q", data)
	}
	if u, err := ReadUsageFile(dir); err != nil || len(u.Entities) != 0 {
		t.Errorf("after set aside: %v, %v", u, err)
	}
	// A directory that does not exist is an error, not empty usage.
	if err := WriteUsageFile(filepath.Join(dir, "missing"), first); err == nil {
		t.Error("writing into a missing directory should fail")
	}
}
