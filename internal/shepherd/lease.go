package shepherd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopbs/gopbs/internal/atomicfile"
)

// The lease (fencing, DESIGN §6.3 and SECURITY.md). Every answered status
// report renews the lease of this mom's jobs; each job's shepherd reads
// the lease file once a second and kills its job the moment the lease has
// lapsed. The shepherds do this on their own, so a mom that is stopped,
// hung or cut off from the server cannot leave a job running after the
// server may have started it elsewhere.
//
// The file mom_priv/lease holds the deadline as nanoseconds of
// CLOCK_BOOTTIME: one clock for the mom and its shepherds that no change
// of the wall clock moves and that keeps counting while the host is
// suspended. "0" means no lease (the server never requeues, so there is
// nothing to fence); no file means the same (no report answered yet).
const fileLease = "lease"

// leaseCheck is how often a shepherd reads the lease.
const leaseCheck = time.Second

// BootNow reads CLOCK_BOOTTIME.
func BootNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		// Not on this kernel: the monotonic clock is the next best.
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	}
	return time.Duration(ts.Nano())
}

// LeasePath is the lease file of the mom whose job directories are in
// jobsDir (mom_priv/jobs).
func LeasePath(jobsDir string) string {
	return filepath.Join(filepath.Dir(jobsDir), fileLease)
}

// WriteLease records a new deadline (0: none), atomically. Not fsynced:
// it is renewed at every status report, and the shepherds that read it do
// not outlive a crash of the host.
func WriteLease(path string, deadline time.Duration) error {
	return atomicfile.WriteWith(path, []byte(strconv.FormatInt(int64(deadline), 10)+"\n"), 0o644, atomicfile.Options{FixedTemp: true, NoSync: true})
}

// readLease returns the deadline, 0 for none. A file that cannot be read
// for a reason other than its absence, or that does not parse, is an
// error: a shepherd takes that as a lapsed lease rather than run unfenced.
func readLease(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: not a deadline: %q", path, b)
	}
	return time.Duration(n), nil
}

// leaseLapsed tells a shepherd whether its job must die now, and why.
func leaseLapsed(path string) (bool, string) {
	deadline, err := readLease(path)
	switch {
	case err != nil:
		return true, "job killed: its mom's lease cannot be read (" + err.Error() + ")"
	case deadline == 0:
		return false, ""
	case BootNow() > deadline:
		return true, "job killed: its mom lost contact with the server for longer than its lease"
	}
	return false, ""
}
