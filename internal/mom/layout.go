package mom

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/atomicfile"
)

// The version of mom_priv's layout (its job directories and records)
// this pbs_mom reads and writes, kept in mom_priv/layout_version: a
// mom_priv a later version made is refused at start rather than misread
// (a package downgraded over a newer one), as pbs_server refuses a newer
// store.
const (
	momLayout  = 1
	layoutFile = "layout_version"
)

// checkLayout records the layout in mom_priv (dir) the first time, and
// refuses one a newer pbs_mom made.
func checkLayout(dir string) error {
	path := filepath.Join(dir, layoutFile)
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return atomicfile.Write(path, []byte(strconv.Itoa(momLayout)+"\n"), 0o644)
	}
	if err != nil {
		return fmt.Errorf("mom_priv: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 1 {
		return fmt.Errorf("%s: %q is not a layout version", path, strings.TrimSpace(string(b)))
	}
	if n > momLayout {
		return fmt.Errorf("%s was made by a newer pbs_mom (layout %d; this pbs_mom, %s, reads layout %d): run that version again, or move mom_priv aside", dir, n, Version, momLayout)
	}
	return nil
}
