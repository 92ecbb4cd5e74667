package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// temporaries lists the temporary files of path left in its directory.
func temporaries(path string) []string {
	unique, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	fixed, _ := filepath.Glob(path + ".tmp")
	return append(unique, fixed...)
}

// A write replaces the file whole, with the mode asked for whatever the
// umask, and leaves no temporary file, in every mode but FixedTemp's.
func TestWriteReplacesWithTheModeAsked(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, o := range []Options{{}, {NoSync: true}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f")
		if err := WriteWith(path, []byte("one"), 0o644, o); err != nil {
			t.Fatal(err)
		}
		if err := WriteWith(path, []byte("two"), 0o640, o); err != nil {
			t.Fatal(err)
		}
		if got := read(t, path); got != "two" {
			t.Errorf("%+v: %q, want two", o, got)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("%+v: mode %v, want 0640", o, fi.Mode().Perm())
		}
		if left := temporaries(path); len(left) != 0 {
			t.Errorf("%+v: left %v", o, left)
		}
	}
}

// NoReplace never touches an existing file.
func TestWriteNoReplaceKeepsTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteWith(path, []byte("first"), 0o644, Options{NoReplace: true}); err != nil {
		t.Fatal(err)
	}
	err := WriteWith(path, []byte("second"), 0o644, Options{NoReplace: true})
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("second write: %v, want fs.ErrExist", err)
	}
	if got := read(t, path); got != "first" {
		t.Errorf("%q, want first", got)
	}
	if left := temporaries(path); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// FixedTemp writes through <name>.tmp, reusing a file left there (its
// inode), and the new file is that inode.
func TestWriteFixedTempReusesTheTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path+".tmp", []byte("a longer leftover"), 0o600); err != nil {
		t.Fatal(err)
	}
	var before syscall.Stat_t
	if err := syscall.Stat(path+".tmp", &before); err != nil {
		t.Fatal(err)
	}
	if err := WriteWith(path, []byte("new"), 0o600, Options{FixedTemp: true}); err != nil {
		t.Fatal(err)
	}
	var after syscall.Stat_t
	if err := syscall.Stat(path, &after); err != nil {
		t.Fatal(err)
	}
	if after.Ino != before.Ino {
		t.Errorf("inode %d, want the temporary file's %d", after.Ino, before.Ino)
	}
	if got := read(t, path); got != "new" {
		t.Errorf("%q, want new", got)
	}
}

// A write that fails leaves the old file and no temporary file.
func TestWriteFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := Write(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file cannot be renamed over a directory.
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "d"), []byte("x"), 0o644); err == nil {
		t.Error("writing over a non-empty directory succeeded")
	}
	if got := read(t, path); got != "old" {
		t.Errorf("%q, want old", got)
	}
	if left := temporaries(filepath.Join(dir, "d")); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}
