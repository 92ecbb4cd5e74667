package stagecopy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/atomicfile"
)

// Partial files. A copy writes its destination under a temporary name
// beside it (.<name>.pbs-stage-<hex>) and renames it into place. A copy
// cut short with its process (a mom killed while another mom streams a
// stage-out to it, a shepherd lost with its host) would leave that file in
// the owner's directory for good. So each is recorded in mom_priv/partials
// (one record <hex>.json: the path and the owner) durably before it is
// created, and the record goes once the file was renamed or removed. A
// mom that starts removes the file of every record it finds, as the file's
// owner, and then the record (recoverPartials): only files this system
// created, found by their recorded paths; no user's directory is ever
// scanned.
//
// The process writing a partial file holds a lock (flock) on its record
// until it is done: a shepherd still copying when its mom restarts keeps
// its records, and its file, to itself.

// PartialsDir is the directory of the records, in mom_priv.
const PartialsDir = "partials"

// partialMark is what a partial file's name holds before its hex suffix.
const partialMark = ".pbs-stage-"

// partialHexLen is the length of a partial file's hex suffix (6 random
// bytes).
const partialHexLen = 12

// partialRecord is one record: the partial file's absolute path and the
// owner as whom it was created (and is removed).
type partialRecord struct {
	Path string `json:"path"`
	User string `json:"user"`
	UID  uint32 `json:"uid"`
}

// partialName is the temporary name of a copy to dst.
func partialName(dst, hex string) string {
	return filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+partialMark+hex)
}

// parsePartialRecord reads a record and checks that it names a partial
// file as this package names them, and that it is the record of that
// file (its name is the file's hex suffix): a record that says anything
// else is refused, so recovery never removes a file this system did not
// create.
func parsePartialRecord(name string, data []byte) (partialRecord, error) {
	var rec partialRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, err
	}
	hex, ok := strings.CutSuffix(name, ".json")
	if !ok || len(hex) != partialHexLen || strings.Trim(hex, "0123456789abcdef") != "" {
		return rec, fmt.Errorf("record name %q is not <hex>.json", name)
	}
	base := filepath.Base(rec.Path)
	switch {
	case !filepath.IsAbs(rec.Path) || filepath.Clean(rec.Path) != rec.Path || strings.ContainsRune(rec.Path, 0):
		return rec, fmt.Errorf("path %q is not absolute and clean", rec.Path)
	case !strings.HasPrefix(base, ".") || !strings.HasSuffix(base, partialMark+hex) || len(base) <= 1+len(partialMark)+len(hex):
		return rec, fmt.Errorf("path %q is not the partial file of record %s", rec.Path, name)
	case rec.User == "":
		return rec, errors.New("no owner")
	}
	return rec, nil
}

// beginPartial records the partial file path, of usr, in dir before it is
// created; end removes the record once the file is renamed or removed.
// With no dir, nothing is recorded.
func beginPartial(dir string, usr *asuser.Account, path, hex string) (end func(), err error) {
	if dir == "" {
		return func() {}, nil
	}
	b, err := json.Marshal(partialRecord{Path: path, User: usr.Name, UID: usr.UID})
	if err != nil {
		return nil, err
	}
	rec := filepath.Join(dir, hex+".json")
	f, err := os.OpenFile(rec, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("record of the partial file: %w", err)
	}
	fail := func(err error) (func(), error) {
		os.Remove(rec)
		f.Close()
		return nil, fmt.Errorf("record of the partial file: %w", err)
	}
	// A new file of this process's: the lock is free.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fail(err)
	}
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return fail(err)
	}
	return func() {
		os.Remove(rec)
		f.Close()
	}, nil
}

// RecoverPartials removes the partial files a previous mom (or a shepherd
// that is gone) left, and their records, in dir (mom_priv/partials). A
// starting mom calls it before it serves.
func RecoverPartials(dir string, log hclog.Logger) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		log.Error("cannot read the records of partial files", "dir", dir, "error", err)
		return
	}
	for _, e := range ents {
		recoverPartial(dir, e.Name(), log)
	}
}

// recoverPartial handles the record name in dir.
func recoverPartial(dir, name string, log hclog.Logger) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		log.Error("unreadable record of a partial file removed", "record", name, "error", err)
		os.Remove(path)
		return
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return // its copy is still going (a shepherd that outlived its mom)
	}
	b, err := os.ReadFile(path)
	if err == nil && len(b) == 0 {
		// Created by a copy that has not locked it yet, or left so by one
		// that died before it wrote it (and before it created its file).
		if fi, serr := f.Stat(); serr == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(path)
		}
		return
	}
	var rec partialRecord
	if err == nil {
		rec, err = parsePartialRecord(name, b)
	}
	if err != nil {
		// Cut short before it was complete (the file was not created yet),
		// or not one of ours.
		log.Warn("record of a partial file dropped", "record", name, "error", err)
		os.Remove(path)
		return
	}
	// The owner with all their groups: the job's group, which the copy
	// may have written the directory with, is one of them.
	usr, err := asuser.Lookup(rec.User, "")
	if err == nil && usr.UID != rec.UID {
		err = fmt.Errorf("%s is now uid %d, not %d", rec.User, usr.UID, rec.UID)
	}
	if err != nil {
		log.Warn("partial file left: its owner is not who created it", "file", rec.Path, "error", err)
		os.Remove(path)
		return
	}
	err = removePartial(usr, rec.Path)
	switch {
	case errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR):
		// Renamed into place or removed before the record went.
	case errors.Is(err, errNotPartial):
		log.Warn("left a file in the place of a partial file", "file", rec.Path, "user", rec.User, "error", err)
	case err != nil:
		// Kept: the next start tries again (a file system down now).
		log.Warn("cannot remove a partial file", "file", rec.Path, "user", rec.User, "error", err)
		return
	default:
		log.Info("removed the partial file of a copy cut short", "file", rec.Path, "user", rec.User)
	}
	os.Remove(path)
}

// errNotPartial is a file found at a partial file's path that cannot be
// it: not a regular file, or not the owner's.
var errNotPartial = errors.New("not the partial file")

// removePartial removes a partial file as its owner: only a regular file
// that is the owner's (unlink never follows a symlink at the path).
func removePartial(usr *asuser.Account, path string) error {
	return asuser.Run(usr, func() error {
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			return err
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			return fmt.Errorf("%w: %s is a %s", errNotPartial, path, fileKind(st.Mode))
		}
		if syscall.Geteuid() == 0 && st.Uid != usr.UID {
			return fmt.Errorf("%w: %s belongs to uid %d, not to %s", errNotPartial, path, st.Uid, usr.Name)
		}
		return syscall.Unlink(path)
	})
}
