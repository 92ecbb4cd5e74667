package schedpriv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureDir is the real Torque sample sched_priv shipped beside the
// repository (shared/fixtures), used exactly as shipped.
func fixtureDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "fixtures", "sched_priv")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("fixtures not available: %v", err)
	}
	return dir
}

func openFixture(t testing.TB, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtureDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// wantProblems checks that err is an Errors holding exactly the given
// messages, each "file:line: text" prefix-matched.
func wantProblems(t *testing.T, err error, want ...string) {
	t.Helper()
	errs, ok := AsErrors(err)
	if !ok {
		t.Fatalf("error %v (%T) is not an Errors", err, err)
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(errs), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i].String(), w) {
			t.Errorf("problem %d = %q, want prefix %q", i, errs[i].String(), w)
		}
	}
}
