package shepherd

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gopbs/gopbs/internal/asuser"
)

// TmpBase is where the jobs' TMPDIRs are made: $tmpdir, else the
// system's temporary directory.
func TmpBase(set Settings) string {
	if set.TmpDir != "" {
		return set.TmpDir
	}
	return os.TempDir()
}

// NewTmpDir names a TMPDIR for job jobID: pbs.<jobid>.<random> in
// TmpBase. The base is usually open to every user (/tmp): a name they
// could know before it exists (pbs.<jobid>) they could take first, and
// the job would not start, or get their directory. The random part (60
// bits) is known only once the mom or the shepherd has made the
// directory; short, since programs put their sockets in TMPDIR and a
// socket's path has at most 107 bytes. The mom records the name in the
// job file (JobFile.TmpDir), where the shepherd, the task shepherds and
// a restarted mom read it: nothing computes it again.
func NewTmpDir(set Settings, jobID string) string {
	return filepath.Join(TmpBase(set), "pbs."+jobID+"."+strings.ToLower(rand.Text()[:12]))
}

// TmpDirPath is the job's TMPDIR on this node: the name its mom recorded,
// or, in the job file of an earlier mom that recorded none, the name it
// used (pbs.<jobid> in the base).
func (jf *JobFile) TmpDirPath() string {
	if jf.TmpDir != "" {
		return jf.TmpDir
	}
	return filepath.Join(TmpBase(jf.Settings), "pbs."+jf.JobID)
}

// openTmpDir readies path, the job's TMPDIR, for usr (the owner, given it
// when asOther): a spare the mom moved there (IsSpareTmpDir) is reused,
// else a new directory is made. Anything else found there is not the
// job's (NewTmpDir's names are not known before they exist): it is
// neither used nor removed, and the start fails.
func openTmpDir(path string, usr *asuser.Account, asOther bool) error {
	if !IsSpareTmpDir(path, true) {
		if err := os.Mkdir(path, 0o700); err != nil {
			return err
		}
	}
	// Through a descriptor of the directory itself, checked to be the
	// mom user's: a base open to all without the sticky bit would let
	// anyone swap the name for a link meanwhile.
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Uid != uint32(os.Geteuid()) {
		return fmt.Errorf("%s is uid %d's, not this mom's", path, st.Uid)
	}
	// 0700 whatever the job's umask.
	if err := syscall.Fchmod(fd, 0o700); err != nil {
		return err
	}
	if asOther {
		return syscall.Fchown(fd, int(usr.UID), int(usr.GID))
	}
	return nil
}

// closeTmpDir ends a job's TMPDIR: it takes the directory back from the
// job's owner (from then on they cannot enter it, rename it or put
// anything in it, also from a process that escaped the job) and empties
// it, leaving it for the mom to recycle (IsSpareTmpDir); when any of that
// fails it removes it, as it always did.
func closeTmpDir(path string) {
	if err := reclaimTmpDir(path); err != nil {
		os.RemoveAll(path)
	}
}

func reclaimTmpDir(path string) error {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	if err := syscall.Fchown(fd, os.Geteuid(), os.Getegid()); err != nil {
		return err
	}
	if err := syscall.Fchmod(fd, 0o700); err != nil {
		return err
	}
	// ACLs the owner set survive the chmod (it only narrows their mask):
	// a default ACL would hand the next job's files to them.
	for _, name := range []string{"system.posix_acl_access", "system.posix_acl_default"} {
		if err := unix.Fremovexattr(fd, name); err != nil && err != unix.ENODATA && err != unix.EOPNOTSUPP {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	// The owner may have renamed the directory away between the open and
	// the chown: then what is at path is not what was reclaimed.
	var st, lst syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if err := syscall.Lstat(path, &lst); err != nil {
		return err
	}
	if st.Dev != lst.Dev || st.Ino != lst.Ino {
		return fmt.Errorf("%s was replaced", path)
	}
	// Emptied through the descriptor: nothing the owner left inside
	// (links, directories) can lead the removal elsewhere.
	root, err := os.OpenRoot("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return err
	}
	defer root.Close()
	d, err := root.Open(".")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := root.RemoveAll(name); err != nil {
			return err
		}
	}
	return nil
}

// IsSpareTmpDir reports whether dir is a TMPDIR as closeTmpDir leaves it:
// a directory of the mom's user, mode 0700, and (when empty is set)
// holding nothing. Its owner then cannot have changed it since.
func IsSpareTmpDir(dir string, empty bool) bool {
	var st syscall.Stat_t
	if syscall.Lstat(dir, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR ||
		st.Uid != uint32(os.Geteuid()) || st.Mode&0o7777 != 0o700 {
		return false
	}
	if !empty {
		return true
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return err == io.EOF
}
