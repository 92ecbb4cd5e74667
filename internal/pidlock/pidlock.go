// Package pidlock is the one way a daemon makes itself the only one of
// its kind on a PBS_HOME: an exclusive flock on a file that holds its
// pid (server_priv/server.lock, mom_priv/mom.lock, sched_priv/sched.lock,
// as OpenPBS's). The lock dies with the process, a kill -9 too.
package pidlock

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// HeldError is a lock another process holds; PID is what its file says.
type HeldError struct {
	Path, PID string
}

func (e *HeldError) Error() string { return fmt.Sprintf("%s is held by pid %s", e.Path, e.PID) }

// Lock takes the lock on path, waiting up to wait for a holder that is
// exiting, and writes this process's pid in it. A lock another process
// keeps is a *HeldError. Call the returned function to release it
// before the process ends.
func Lock(path string, wait time.Duration) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || !time.Now().Before(deadline) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &HeldError{Path: path, PID: strings.TrimSpace(string(b[:n]))}
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
