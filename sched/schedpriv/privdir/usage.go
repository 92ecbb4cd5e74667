package privdir

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gopbs/gopbs/internal/atomicfile"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// WriteUsageFile replaces dir/usage (schedpriv.UsageFile) with s, in the
// format of schedpriv.Encode, atomically: it writes a temporary file in
// dir, syncs it, renames it over the old file and syncs dir, so a crash
// leaves either the old file or the new one, never a mixture. A state
// Encode refuses leaves the old file in place.
func WriteUsageFile(dir string, s *schedpriv.UsageState) error {
	var buf bytes.Buffer
	if err := schedpriv.Encode(&buf, s); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, schedpriv.UsageFile), buf.Bytes(), 0o644)
}

// ReadUsageFile reads dir/usage with schedpriv.Decode; messages name the
// file by its path. A missing file is not an error: it gives an empty
// state, which is how fair share starts on a new installation.
func ReadUsageFile(dir string) (*schedpriv.UsageState, error) {
	path := filepath.Join(dir, schedpriv.UsageFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return schedpriv.NewUsageState(), nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return schedpriv.Decode(f, path)
}

// SetAsideUsageFile renames a usage file that cannot be read to
// usage.damaged-<unix time> beside it, so that the scheduler can start
// afresh without destroying what an admin may want to look at or repair,
// and returns the new path.
func SetAsideUsageFile(dir string, now time.Time) (string, error) {
	from := filepath.Join(dir, schedpriv.UsageFile)
	to := fmt.Sprintf("%s.damaged-%d", from, now.Unix())
	if err := os.Rename(from, to); err != nil {
		return "", fmt.Errorf("set aside %s: %w", from, err)
	}
	return to, atomicfile.SyncDir(dir)
}
