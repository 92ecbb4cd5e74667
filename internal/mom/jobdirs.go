package mom

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/gopbs/gopbs/internal/shepherd"
)

// dirPool keeps emptied directories of finished jobs for the next jobs:
// their job directories (mom_priv/jobs/<id>) and their TMPDIRs. Why: a
// job directory is a dozen files and a TMPDIR a directory, and making and
// freeing that many inodes per job is much of a short job's cost on some
// file systems (ext4 without a journal scans past every inode freed in
// the last half minute on each new one; a new directory costs most).
//
// A recycled job directory holds the mom's and the shepherd's own files
// under their temporary names (job.json.tmp ...), which the writers
// truncate and rename into place: a job start then makes one inode, its
// script. Only the mom user's own single-link regular files with names
// this package knows are kept; everything else, the script first (it is
// the job owner's, who could hold a hard link to it), is removed. A
// directory whose shepherd may still live is never recycled. A TMPDIR is
// recycled only as its shepherd left it (taken back from the job's owner,
// without ACLs, empty: shepherd.IsSpareTmpDir) and only for a later job of
// the same owner: a process of theirs that escaped the job and still holds the
// directory open could list what another user's job puts there.
//
// Spares are kept by key (the owner's uid for TMPDIRs, 0 for job
// directories). take and put may be called from any goroutine.
type dirPool struct {
	spare func(n int) string    // the name of the nth spare directory
	ready func(dir string) bool // readies a finished job's dir for reuse
	max   int

	mu   sync.Mutex
	free map[uint32][]string
	size int // spares in free
	next int
}

// dirPoolMax bounds the spare directories kept (each holds a few small
// files); a host starting jobs faster than they end needs no more.
const dirPoolMax = 256

// Files of a job directory kept by a recycled one. Those written through
// a temporary file and a rename (shepherd.WriteJSON: <name>.tmp) are kept
// under the temporary name, so that the next write truncates it and its
// rename frees nothing; the others are truncated in place by their
// writers.
var (
	recycledAtomic  = []string{shepherd.FileJob, shepherd.FileSession, shepherd.FileResult, shepherd.FileShepherd, shepherd.FileStage, shepherd.FilePhase}
	recycledInPlace = []string{shepherd.FileNodes, shepherd.FileLog, shepherd.FileLock}
)

// newJobDirPool empties root, mom_priv/spare (what a previous mom left
// there may be of any age), and returns an empty pool of job directories
// over it.
func newJobDirPool(root string, max int) (*dirPool, error) {
	if err := os.RemoveAll(root); err != nil {
		return nil, fmt.Errorf("spare job directories: %w", err)
	}
	if err := os.Mkdir(root, 0o700); err != nil {
		return nil, fmt.Errorf("spare job directories: %w", err)
	}
	return &dirPool{
		spare: func(n int) string { return filepath.Join(root, strconv.Itoa(n)) },
		ready: emptyJobDir,
		max:   max,
		free:  map[uint32][]string{},
	}, nil
}

// spareTmpPrefix names the spare TMPDIRs kept in the TMPDIRs' parent (a
// rename cannot cross file systems, so they stay beside the TMPDIRs):
// .pbs_spare.<node>.<random>.<n>, the node's name keeping apart the moms
// that share a host's /tmp, the random part making the names unknown to
// users (who could otherwise take them first and keep every spare out).
const spareTmpPrefix = ".pbs_spare."

// newTmpDirPool returns an empty pool of TMPDIRs made in base for node,
// after removing the spares a previous mom of node left there.
func newTmpDirPool(base, node string, max int) *dirPool {
	old, _ := filepath.Glob(filepath.Join(base, spareTmpPrefix+node+".*"))
	for _, dir := range old {
		if shepherd.IsSpareTmpDir(dir, false) {
			os.Remove(dir)
		}
	}
	prefix := spareTmpPrefix + node + "." + strconv.FormatUint(rand.Uint64(), 36) + "."
	return &dirPool{
		spare: func(n int) string { return filepath.Join(base, prefix+strconv.Itoa(n)) },
		ready: func(dir string) bool { return shepherd.IsSpareTmpDir(dir, true) },
		max:   max,
		free:  map[uint32][]string{},
	}
}

// take renames a spare directory kept under key to dst, an absent path
// or an empty directory; it reports false when there is none or dst is
// in the way.
func (p *dirPool) take(dst string, key uint32) bool {
	for {
		p.mu.Lock()
		list := p.free[key]
		n := len(list)
		if n == 0 {
			p.mu.Unlock()
			return false
		}
		spare := list[n-1]
		p.free[key] = list[:n-1]
		p.size--
		p.mu.Unlock()
		err := os.Rename(spare, dst)
		if err == nil {
			return true
		}
		if _, serr := os.Lstat(spare); serr == nil {
			// dst is in the way (a directory that is not empty): the
			// spare stays for another job.
			p.keep(spare, key)
			return false
		}
	}
}

func (p *dirPool) keep(spare string, key uint32) {
	p.mu.Lock()
	p.free[key] = append(p.free[key], spare)
	p.size++
	p.mu.Unlock()
}

// put keeps dir, a finished job's directory, under key for a later job
// when ready says it may be reused and the pool has room; it reports
// whether it did. A directory not kept is where it was, as it was or
// partly emptied, or gone.
func (p *dirPool) put(dir string, key uint32) bool {
	p.mu.Lock()
	full := p.size >= p.max
	p.mu.Unlock()
	if full || !p.ready(dir) {
		return false
	}
	p.mu.Lock()
	spare := p.spare(p.next)
	p.next++
	p.mu.Unlock()
	if err := os.Rename(dir, spare); err != nil {
		return false
	}
	// Whatever was written into dir by its old name until the rename (a
	// late delete marker) is in the spare now; nothing can be after it.
	// Looked at again under the new name, so none of it reaches a job.
	if !p.ready(spare) {
		os.RemoveAll(spare)
		return false
	}
	p.keep(spare, key)
	return true
}

// unlockClose lets go of the flock a mom holds on f, then closes f. The
// unlock is what frees it at once: a child forked meanwhile (a shepherd
// of another job, between its fork and its exec) shares f's open file
// description, and a close alone would leave the lock held by it until
// it execs, long enough for the next shepherd of the same directory (a
// recycled one) to find it taken and fail.
func unlockClose(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// emptyJobDir removes from dir, a finished job's directory, all but the
// files a recycled one keeps and renames those written atomically to
// their temporary names. It reports false when dir must not be reused.
func emptyJobDir(dir string) bool {
	// A shepherd ends by releasing this lock; one that still holds it
	// (exiting, or not this mom's child) may yet touch its files.
	lock, err := os.OpenFile(filepath.Join(dir, shepherd.FileLock), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		lock.Close()
		return false
	}
	defer unlockClose(lock)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	euid := uint32(os.Geteuid())
	for _, e := range ents {
		name := e.Name()
		path := filepath.Join(dir, name)
		fi, err := os.Lstat(path)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		mine := ok && fi.Mode().IsRegular() && st.Uid == euid && st.Nlink == 1
		switch {
		case mine && slices.Contains(recycledAtomic, name):
			if os.Rename(path, path+".tmp") != nil {
				return false
			}
		case mine && (slices.Contains(recycledInPlace, name) || isTempOf(name, recycledAtomic)):
		default:
			if os.RemoveAll(path) != nil {
				return false
			}
		}
	}
	return true
}

// isTempOf reports whether name is the temporary name of one of names.
func isTempOf(name string, names []string) bool {
	base, ok := strings.CutSuffix(name, ".tmp")
	return ok && slices.Contains(names, base)
}
