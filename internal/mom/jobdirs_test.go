package mom

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/gopbs/gopbs/internal/shepherd"
)

// finishedJobDir makes a job directory as a finished job leaves it.
func finishedJobDir(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	inodes := map[string]uint64{}
	for _, name := range []string{shepherd.FileJob, shepherd.FileSession, shepherd.FileResult, shepherd.FileShepherd, shepherd.FileNodes, shepherd.FileLog, shepherd.FileLock, shepherd.FileScript, shepherd.FileDelete, "job.json.tmp.bak"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("old "+name), 0o600); err != nil {
			t.Fatal(err)
		}
		inodes[name] = inode(t, p)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	return inodes
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestDirPoolRecyclesOnlyItsOwnFiles(t *testing.T) {
	t.Parallel()
	priv := t.TempDir()
	p, err := newJobDirPool(filepath.Join(priv, "spare"), 4)
	if err != nil {
		t.Fatal(err)
	}
	jobs := filepath.Join(priv, "jobs")
	os.Mkdir(jobs, 0o751)
	a := filepath.Join(jobs, "1.srv")
	inodes := finishedJobDir(t, a)
	// A second link to a kept file: whoever holds it would see the next
	// job's content, so that file goes.
	if err := os.Link(filepath.Join(a, shepherd.FileNodes), filepath.Join(priv, "link")); err != nil {
		t.Fatal(err)
	}
	if !p.put(a, 0) {
		t.Fatal("a finished job's directory was not kept")
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Fatalf("the job directory is still there after put: %v", err)
	}
	b := filepath.Join(jobs, "2.srv")
	if !p.take(b, 0) {
		t.Fatal("no spare directory to take")
	}
	want := []string{"job.json.tmp", "result.tmp", "session.tmp", "shepherd.lock", "shepherd.log", "shepherd.pid.tmp"}
	if got := names(t, b); !slices.Equal(got, want) {
		t.Fatalf("a recycled directory holds %q, want %q", got, want)
	}
	// The kept files are the same inodes, under their temporary names.
	for _, name := range []string{shepherd.FileJob, shepherd.FileSession, shepherd.FileResult, shepherd.FileShepherd} {
		if got := inode(t, filepath.Join(b, name+".tmp")); got != inodes[name] {
			t.Errorf("%s.tmp is inode %d, want the old %s's %d", name, got, name, inodes[name])
		}
	}
	// Writing the job's files reuses them: no new inode for the job file.
	if err := shepherd.WriteJSONVolatile(b, shepherd.FileJob, shepherd.JobFile{}, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := inode(t, filepath.Join(b, shepherd.FileJob)); got != inodes[shepherd.FileJob] {
		t.Errorf("job.json written into a recycled directory is inode %d, want %d", got, inodes[shepherd.FileJob])
	}
	// The pool is empty now.
	if p.take(filepath.Join(jobs, "3.srv"), 0) {
		t.Error("took a second spare from a pool that kept one")
	}
}

func TestDirPoolKeepsNoDirectoryInDoubt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) (undo func())
		max     int
	}{
		{"the shepherd still holds its lock", func(t *testing.T, dir string) func() {
			f, err := os.OpenFile(filepath.Join(dir, shepherd.FileLock), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			return func() { f.Close() }
		}, 4},
		{"no lock file (no shepherd ever ran)", func(t *testing.T, dir string) func() {
			os.Remove(filepath.Join(dir, shepherd.FileLock))
			return func() {}
		}, 4},
		{"the pool is full", func(t *testing.T, dir string) func() { return func() {} }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			priv := t.TempDir()
			p, err := newJobDirPool(filepath.Join(priv, "spare"), tt.max)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(priv, "1.srv")
			finishedJobDir(t, dir)
			undo := tt.prepare(t, dir)
			defer undo()
			if p.put(dir, 0) {
				t.Fatal("the directory was kept")
			}
			if _, err := os.Stat(dir); err != nil {
				t.Errorf("a directory not kept is gone: %v", err)
			}
			if got := names(t, filepath.Join(priv, "spare")); len(got) != 0 {
				t.Errorf("the pool kept %q", got)
			}
		})
	}
}

func TestDirPoolStartsEmpty(t *testing.T) {
	t.Parallel()
	priv := t.TempDir()
	root := filepath.Join(priv, "spare")
	if err := os.MkdirAll(filepath.Join(root, "7"), 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := newJobDirPool(root, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, root); len(got) != 0 {
		t.Errorf("a new pool kept a previous mom's spares: %q", got)
	}
	if p.take(filepath.Join(priv, "1.srv"), 0) {
		t.Errorf("a new pool has a spare")
	}
}

// What lands in a job directory by its old name until the moment it is
// renamed into the pool (a delete marker written late) never reaches the
// next job: the spare is looked at again under its new name.
func TestDirPoolLooksAgainAfterTheRename(t *testing.T) {
	t.Parallel()
	priv := t.TempDir()
	p, err := newJobDirPool(filepath.Join(priv, "spare"), 4)
	if err != nil {
		t.Fatal(err)
	}
	first := true
	p.ready = func(dir string) bool {
		ok := emptyJobDir(dir)
		if first {
			first = false
			os.WriteFile(filepath.Join(dir, shepherd.FileDelete), []byte("0"), 0o600)
		}
		return ok
	}
	dir := filepath.Join(priv, "1.srv")
	finishedJobDir(t, dir)
	if !p.put(dir, 0) {
		t.Fatal("the directory was not kept")
	}
	next := filepath.Join(priv, "2.srv")
	if !p.take(next, 0) {
		t.Fatal("no spare")
	}
	if _, err := os.Stat(filepath.Join(next, shepherd.FileDelete)); err == nil {
		t.Errorf("the next job's directory holds the previous job's delete marker: %q", names(t, next))
	}
}

// Moms sharing a host's /tmp keep their spares apart: a mom starting
// removes only its own node's.
func TestSpareTmpDirsAreEachNodes(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "pbs.1.srv")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if !newTmpDirPool(base, "n1", 4).put(dir, 0) {
		t.Fatal("an empty TMPDIR was not kept")
	}
	spares, _ := filepath.Glob(filepath.Join(base, spareTmpPrefix+"n1.*"))
	if len(spares) != 1 {
		t.Fatalf("spares of n1: %q", spares)
	}
	newTmpDirPool(base, "n2", 4)
	if _, err := os.Stat(spares[0]); err != nil {
		t.Errorf("a mom of n2 starting removed n1's spare: %v", err)
	}
	newTmpDirPool(base, "n1", 4)
	if _, err := os.Stat(spares[0]); !os.IsNotExist(err) {
		t.Errorf("a restarted mom of n1 kept its predecessor's spare: %v", err)
	}
}

// The pool gives a spare TMPDIR only to a job of the owner whose job
// left it.
func TestTmpDirPoolKeepsEachOwnersSpares(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	first := filepath.Join(base, "pbs.1.srv")
	if err := os.Mkdir(first, 0o700); err != nil { // as a shepherd leaves it
		t.Fatal(err)
	}
	pool := newTmpDirPool(base, "n1", 4)
	if !pool.put(first, 1000) {
		t.Fatal("the pool did not keep a closed TMPDIR")
	}
	second := filepath.Join(base, "pbs.2.srv")
	if pool.take(second, 1001) {
		t.Fatal("another owner's job took the spare TMPDIR")
	}
	if !pool.take(second, 1000) {
		t.Fatal("no spare TMPDIR to take")
	}
	if _, err := os.Stat(second); err != nil {
		t.Errorf("the spare is not at the job's TMPDIR: %v", err)
	}
}

// A lock the mom lets go of is free at once, though a child process
// still shares its open file description (as one forked meanwhile does
// until it execs): the next shepherd of the directory takes it.
func TestUnlockCloseFreesALockAChildShares(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), shepherd.FileLock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "30")
	child.ExtraFiles = []*os.File{f} // shares f's open file description
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	unlockClose(f)
	g, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := syscall.Flock(int(g.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("the lock let go of is still held through the child's copy: %v", err)
	}
}
