package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Lock makes the daemon the one of its kind on this PBS_HOME, as
// OpenPBS's server.lock and mom.lock do: path (server_priv/server.lock,
// mom_priv/mom.lock) is locked for as long as the process lives and holds
// its pid, so that a second pbs_server or pbs_mom started on the same
// PBS_HOME refuses to start, naming the first, instead of sharing its
// store or its jobs. The lock goes with the process (a kill -9 too);
// Close releases it.
func (s *Started) Lock(path string, name string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(b[:n]))
			return fmt.Errorf("another %s (pid %s) runs on this PBS_HOME: it holds %s", name, pid, path)
		}
		return fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	s.lock = f
	return nil
}
