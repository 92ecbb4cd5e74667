package privdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockFile is the file in sched_priv whose lock a running scheduler holds.
const LockFile = "sched.lock"

// ErrLocked is returned by Lock when another process holds the lock.
var ErrLocked = errors.New("held by a running scheduler")

// Lock takes an exclusive lock on dir/sched.lock, waiting up to wait for
// a holder that is exiting, and writes this process's pid in it. A
// scheduler holds it while it runs, so that two schedulers never share a
// PBS_HOME, and tools that rewrite sched_priv state (pbsfs) take it to
// know no scheduler will overwrite what they write. The lock dies with
// the process; call the returned function to release it earlier.
func Lock(dir string, wait time.Duration) (func(), error) {
	path := filepath.Join(dir, LockFile)
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
				return nil, fmt.Errorf("%s: %w (pid %s)", path, ErrLocked, strings.TrimSpace(string(b[:n])))
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
	return func() { f.Close() }, nil
}
