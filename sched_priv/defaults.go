package schedpriv

import (
	"embed"
	"errors"
	"io/fs"
	"os"
)

// File names in sched_priv.
const (
	ConfigFile        = "sched_config"
	HolidaysFile      = "holidays"
	ResourceGroupFile = "resource_group"
	DedicatedFile     = "dedicated_time"
)

// defaultFiles holds the shipped sched_priv files. embed.FS is read-only,
// so this package variable is not mutable state.
//
//go:embed defaults/sched_config defaults/holidays defaults/resource_group defaults/dedicated_time
var defaultFiles embed.FS

// DefaultFiles lists the files InstallDefaults writes, in that order.
func DefaultFiles() []string {
	return []string{ConfigFile, HolidaysFile, ResourceGroupFile, DedicatedFile}
}

// Default returns the shipped contents of one sched_priv file.
func Default(name string) ([]byte, error) {
	return defaultFiles.ReadFile("defaults/" + name)
}

// DefaultFS returns the shipped files as a file system with the four files
// at its top, the shape Load expects.
func DefaultFS() fs.FS {
	sub, err := fs.Sub(defaultFiles, "defaults")
	if err != nil {
		// fs.Sub fails only for an invalid path name, which "defaults" is not.
		panic(err)
	}
	return sub
}

// InstallDefaults writes each shipped file that dir lacks, with mode 0644,
// creating dir (0750) if needed. An existing file is never replaced or
// changed, even one another process creates meanwhile: each file is written
// to a temporary name, synced, then linked into place only if the name is
// free. This is how a fresh PBS_HOME gets its sched_priv.
func InstallDefaults(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	var errs []error
	for _, name := range DefaultFiles() {
		data, err := Default(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = writeAtomic(dir, name, data, 0o644, false)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
