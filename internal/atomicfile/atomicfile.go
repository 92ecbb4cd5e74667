// Package atomicfile writes files that readers see whole: the old file or
// the whole new one, never a part, also after the host crashed. Every
// daemon that replaces a file of its state (pbs_mom's job files and lease,
// the shepherd's result, the scheduler's usage file and defaults) writes
// it here.
//
// A file is written to a temporary file in its directory, which is
// given the mode asked for (whatever the umask), written, flushed to the
// disk (fsync) and renamed over the file; the directory is then flushed,
// so the rename itself survives a crash. Options trade this for speed
// where nothing is lost by it (Options.NoSync), keep an existing file
// (Options.NoReplace) or reuse the temporary file's inode
// (Options.FixedTemp).
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Options changes how Write goes about a file.
type Options struct {
	// NoSync waits for no disk: readers still see the old file or the
	// whole new one, but a host that crashes may lose the new file, or
	// keep neither. For what means nothing after a restart (a process id)
	// or is made durable later by other means.
	NoSync bool
	// NoReplace never touches an existing file: the new file is linked
	// into place, which fails with fs.ErrExist if the name exists, also
	// when another writer made it meanwhile. On a file system without
	// hard links the file is created exclusively instead.
	NoReplace bool
	// FixedTemp names the temporary file <name>.tmp and truncates it when
	// it exists, rather than making a file of a new name: a file of that
	// name left in place (pbs_mom's recycled job directories) is reused,
	// which spares the file system a new inode per write. Only for a path
	// one process at a time writes.
	FixedTemp bool
}

// Write writes data to path atomically and durably, with mode perm.
func Write(path string, data []byte, perm fs.FileMode) error {
	return WriteWith(path, data, perm, Options{})
}

// WriteWith writes data to path atomically, as o says, with mode perm.
func WriteWith(path string, data []byte, perm fs.FileMode, o Options) error {
	dir := filepath.Dir(path)
	var f *os.File
	var err error
	if o.FixedTemp {
		f, err = os.OpenFile(path+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	} else {
		f, err = os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	}
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := fill(f, data, perm, !o.NoSync); err != nil {
		os.Remove(tmp)
		return err
	}
	if o.NoReplace {
		err = os.Link(tmp, path)
		os.Remove(tmp) // the file lives on under path when linked
		if err != nil && !errors.Is(err, fs.ErrExist) {
			// No hard links here: an exclusive create still never
			// replaces an existing file.
			err = writeExclusive(path, data, perm, !o.NoSync)
		}
	} else if err = os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
	}
	if err != nil || o.NoSync {
		return err
	}
	return SyncDir(dir)
}

// fill gives the new file f its mode (the mode as asked, whatever the
// umask: a shepherd runs with its job's, which may hide its files from a
// mom that is not root), its data and, with sync, flushes it; f is closed
// in every case.
func fill(f *os.File, data []byte, perm fs.FileMode, sync bool) error {
	err := f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeExclusive creates path, which must not exist, with data.
func writeExclusive(path string, data []byte, perm fs.FileMode, sync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if err := fill(f, data, perm, sync); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// SyncFile flushes the file at path to the disk.
func SyncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// SyncDir flushes a directory, so that the names made, renamed or
// removed in it survive a crash.
func SyncDir(dir string) error { return SyncFile(dir) }
