package privdir

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/gopbs/gopbs/internal/pidlock"
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
	release, err := pidlock.Lock(path, wait)
	var held *pidlock.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("%s: %w (pid %s)", path, ErrLocked, held.PID)
	}
	return release, err
}
