package privdir

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	schedpriv "gopbs/sched_priv"
)

// WriteUsageFile replaces dir/usage (schedpriv.UsageFile) with u, in the
// format of schedpriv.Encode, atomically: it writes a temporary file in
// dir, syncs it, renames it over the old file and syncs dir, so a crash
// leaves either the old file or the new one, never a mixture. A usage
// Encode refuses leaves the old file in place.
func WriteUsageFile(dir string, u schedpriv.Usage) error {
	var buf bytes.Buffer
	if err := schedpriv.Encode(&buf, u); err != nil {
		return err
	}
	return writeAtomic(dir, schedpriv.UsageFile, buf.Bytes(), 0o644, true)
}

// ReadUsageFile reads dir/usage with schedpriv.Decode; messages name the
// file by its path. A missing file is not an error: it gives an empty
// Usage, which is how fair share starts on a new installation.
func ReadUsageFile(dir string) (schedpriv.Usage, error) {
	path := filepath.Join(dir, schedpriv.UsageFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return schedpriv.Usage{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return schedpriv.Decode(f, path)
}
