package mom

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// finishedJobDir makes a job directory as a finished job leaves it.
func finishedJobDir(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	inodes := map[string]uint64{}
	for _, name := range []string{fileJob, fileSession, fileResult, fileShepherd, fileNodes, fileLog, fileLock, fileScript, fileDelete, "job.json.tmp.bak"} {
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
	if err := os.Link(filepath.Join(a, fileNodes), filepath.Join(priv, "link")); err != nil {
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
	for _, name := range []string{fileJob, fileSession, fileResult, fileShepherd} {
		if got := inode(t, filepath.Join(b, name+".tmp")); got != inodes[name] {
			t.Errorf("%s.tmp is inode %d, want the old %s's %d", name, got, name, inodes[name])
		}
	}
	// Writing the job's files reuses them: no new inode for the job file.
	if err := writeJSONVolatile(b, fileJob, jobFile{}, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := inode(t, filepath.Join(b, fileJob)); got != inodes[fileJob] {
		t.Errorf("job.json written into a recycled directory is inode %d, want %d", got, inodes[fileJob])
	}
	// The pool is empty now.
	if p.take(filepath.Join(jobs, "3.srv"), 0) {
		t.Error("took a second spare from a pool that kept one")
	}
}

func TestDirPoolKeepsNoDirectoryInDoubt(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) (undo func())
		max     int
	}{
		{"the shepherd still holds its lock", func(t *testing.T, dir string) func() {
			f, err := os.OpenFile(filepath.Join(dir, fileLock), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			return func() { f.Close() }
		}, 4},
		{"no lock file (no shepherd ever ran)", func(t *testing.T, dir string) func() {
			os.Remove(filepath.Join(dir, fileLock))
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
			os.WriteFile(filepath.Join(dir, fileDelete), []byte("0"), 0o600)
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
	if _, err := os.Stat(filepath.Join(next, fileDelete)); err == nil {
		t.Errorf("the next job's directory holds the previous job's delete marker: %q", names(t, next))
	}
}
