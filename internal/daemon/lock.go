package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gopbs/gopbs/internal/pidlock"
)

// Lock makes the daemon the one of its kind on this PBS_HOME, as
// OpenPBS's server.lock and mom.lock do (internal/pidlock): a second
// pbs_server or pbs_mom started on the same PBS_HOME refuses to start,
// naming the first, instead of sharing its store or its jobs. Close
// releases it.
func (s *Started) Lock(path string, name string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	release, err := pidlock.Lock(path, 0)
	var held *pidlock.HeldError
	if errors.As(err, &held) {
		return fmt.Errorf("another %s (pid %s) runs on this PBS_HOME: it holds %s", name, held.PID, path)
	}
	if err != nil {
		return err
	}
	s.unlock = release
	return nil
}
