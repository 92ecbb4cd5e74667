// Package privdir is the file-system side of package schedpriv: it reads
// a scheduler's sched_priv directory, installs the shipped default files in
// a new one, and reads and writes the fair-share usage file there.
//
// schedpriv itself stays pure (parsers take readers, fs.FS values and
// times, so policies and the simulator can use its types); everything that
// opens a path, creates a file or syncs a directory lives here. Every
// function takes the directory, normally PBS_HOME/sched_priv.
package privdir

import (
	"os"
	"path/filepath"
	"time"

	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// Load reads the sched_priv files from dir; dedicated times are read in loc
// (nil: UTC). Messages and warnings name files by their path in dir.
// Otherwise it is schedpriv.LoadFS: sched_config must exist, a missing
// optional file is replaced by the shipped default with a warning, and any
// problem in any file gives a nil *Files and an error listing them all.
func Load(dir string, loc *time.Location) (*schedpriv.Files, error) {
	return schedpriv.LoadFSNamed(os.DirFS(dir), func(name string) string { return filepath.Join(dir, name) }, loc)
}
