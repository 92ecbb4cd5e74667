package mom

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mom_priv records its layout the first time; a mom_priv a newer pbs_mom
// made, or a damaged record, stops the mom with a message naming it.
func TestLayoutVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := checkLayout(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, layoutFile)); string(b) != "1\n" {
		t.Errorf("layout recorded as %q", b)
	}
	if err := checkLayout(dir); err != nil {
		t.Errorf("the same layout again: %v", err)
	}
	for content, want := range map[string]string{"2\n": "was made by a newer pbs_mom (layout 2", "x\n": `"x" is not a layout version`} {
		os.WriteFile(filepath.Join(dir, layoutFile), []byte(content), 0o644)
		if err := checkLayout(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("layout %q: %v, want %q", content, err, want)
		}
	}
}
