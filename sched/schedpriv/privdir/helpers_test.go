package privdir

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// fixtureDir is the real Torque sample sched_priv shipped beside the
// repository (shared/fixtures), used exactly as shipped.
func fixtureDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "..", "shared", "fixtures", "sched_priv")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("fixtures not available: %v", err)
	}
	return dir
}

func near(a, b float64) bool { return math.Abs(a-b) < 5e-6 }
