package privdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gopbs/gopbs/internal/atomicfile"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// InstallDefaults writes each shipped file (schedpriv.DefaultFiles) that dir
// lacks, with mode 0644, creating dir (0750) if needed; the holidays file
// is made for year (the current year, for pbs_sched). An existing file is
// never replaced or changed, even one another process creates meanwhile:
// each file is written to a temporary name, synced, then linked into place
// only if the name is free. This is how a fresh PBS_HOME gets its
// sched_priv.
func InstallDefaults(dir string, year int) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	var errs []error
	for _, name := range schedpriv.DefaultFiles() {
		data, err := schedpriv.Default(name, year)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = atomicfile.WriteWith(filepath.Join(dir, name), data, 0o644, atomicfile.Options{NoReplace: true})
		if err != nil && !errors.Is(err, fs.ErrExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
