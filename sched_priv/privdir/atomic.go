package privdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// writeAtomic writes data to dir/name through a synced temporary file.
// With replace it renames over any existing file; without, it links the
// temporary file into place, which fails (fs.ErrExist) if name exists, so
// an existing file is never touched even by a concurrent writer.
func writeAtomic(dir, name string, data []byte, mode fs.FileMode, replace bool) (err error) {
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	tmpName := tmp.Name()
	defer func() {
		if tmp != nil {
			tmp.Close()
		}
		os.Remove(tmpName) // after a rename or link this removes nothing or just the extra name
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; set the mode explicitly so the umask
	// does not decide what admins and tools can read.
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	err = tmp.Close()
	tmp = nil
	if err != nil {
		return err
	}
	final := filepath.Join(dir, name)
	if replace {
		if err = os.Rename(tmpName, final); err != nil {
			return err
		}
	} else if err = os.Link(tmpName, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		// Some file systems have no hard links: fall back to an exclusive
		// create, which still never replaces an existing file.
		if err = writeExclusive(final, data, mode); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

func writeExclusive(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// syncDir makes a rename or link in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
