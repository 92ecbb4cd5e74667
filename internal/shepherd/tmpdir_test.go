package shepherd

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gopbs/gopbs/internal/asuser"
)

// tmpOwner is the account a job's TMPDIR is given to: nobody when the
// test runs as root, else the test's own user.
func tmpOwner(t *testing.T) (usr *asuser.Account, asOther bool) {
	t.Helper()
	if os.Geteuid() == 0 {
		u, err := asuser.Lookup("nobody", "")
		if err != nil {
			t.Skip("no user nobody:", err)
		}
		return u, true
	}
	u, err := asuser.Lookup(currentUser(t), "")
	if err != nil {
		t.Fatal(err)
	}
	return u, false
}

// held lists what dir holds (for messages: an error says why not).
func held(dir string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return []string{err.Error()}
	}
	defer f.Close()
	list, _ := f.Readdirnames(-1)
	return list
}

func statOf(t *testing.T, path string) syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestTmpDirIsReclaimedEmptiedAndReused(t *testing.T) {
	usr, asOther := tmpOwner(t)
	base := t.TempDir()
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(base, "pbs.1.srv")
	if err := openTmpDir(first, usr, asOther); err != nil {
		t.Fatal(err)
	}
	st := statOf(t, first)
	if st.Uid != usr.UID || st.Mode&0o777 != 0o700 {
		t.Fatalf("a new TMPDIR has uid %d mode %o, want %d 0700", st.Uid, st.Mode&0o777, usr.UID)
	}
	// What a job leaves: files, a directory, links pointing out.
	os.WriteFile(filepath.Join(first, "f"), []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(first, "d", "e"), 0o700)
	os.Symlink(outside, filepath.Join(first, "link"))
	os.Symlink(filepath.Dir(outside), filepath.Join(first, "d", "dirlink"))
	if asOther {
		filepath.Walk(first, func(p string, _ os.FileInfo, _ error) error {
			return os.Lchown(p, int(usr.UID), int(usr.GID))
		})
	}
	closeTmpDir(first)
	if !IsSpareTmpDir(first, true) {
		st := statOf(t, first)
		t.Fatalf("a closed TMPDIR is not a spare: uid %d mode %o, holds %q", st.Uid, st.Mode&0o7777, held(first))
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep" {
		t.Fatalf("a file a link in the TMPDIR pointed to is gone or changed: %q %v", b, err)
	}
	// The mom keeps it as a spare and moves it to the next job's TMPDIR
	// path (its pool, in internal/mom, gives it only to a job of the same
	// owner).
	second := filepath.Join(base, "pbs.2.srv")
	if err := os.Rename(first, second); err != nil {
		t.Fatal(err)
	}
	if err := openTmpDir(second, usr, asOther); err != nil {
		t.Fatal(err)
	}
	if got := statOf(t, second); got.Ino != st.Ino || got.Uid != usr.UID {
		t.Errorf("the next TMPDIR is inode %d of uid %d, want the recycled %d given to %d", got.Ino, got.Uid, st.Ino, usr.UID)
	}
}

// What is at a TMPDIR's name but is not a spare the mom moved there is
// not the job's (the names are not known before they exist): it is
// neither used, nor followed, nor removed.
func TestTmpDirNotAsLeftIsNeitherUsedNorRemoved(t *testing.T) {
	usr, asOther := tmpOwner(t)
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		check func(t *testing.T, path string)
	}{
		{"holds a file", func(t *testing.T, path string) {
			os.Mkdir(path, 0o700)
			os.WriteFile(filepath.Join(path, "old"), nil, 0o600)
		}, func(t *testing.T, path string) {
			if got := held(path); len(got) != 1 || got[0] != "old" {
				t.Errorf("the directory holds %q, want its old file alone", got)
			}
		}},
		{"mode opened", func(t *testing.T, path string) {
			os.Mkdir(path, 0o700)
			os.Chmod(path, 0o777)
		}, func(t *testing.T, path string) {
			if st := statOf(t, path); st.Mode&0o7777 != 0o777 {
				t.Errorf("mode %o, want the 0777 it had", st.Mode&0o7777)
			}
		}},
		{"a link", func(t *testing.T, path string) {
			target := t.TempDir()
			os.Chmod(target, 0o755)
			os.Symlink(target, path)
		}, func(t *testing.T, path string) {
			target, err := os.Readlink(path)
			if err != nil {
				t.Fatalf("the link is gone: %v", err)
			}
			if st := statOf(t, target); st.Mode&0o7777 != 0o755 || st.Uid != uint32(os.Geteuid()) || len(held(target)) != 0 {
				t.Errorf("the link's target was changed: mode %o uid %d holding %q", st.Mode&0o7777, st.Uid, held(target))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pbs.1.srv")
			tt.make(t, path)
			if err := openTmpDir(path, usr, asOther); err == nil {
				t.Fatal("openTmpDir took what it found")
			}
			tt.check(t, path)
		})
	}
}

// The names the mom gives TMPDIRs are the job's and 12 random
// characters: two starts of one job never share one, nor can a user
// know one first. A job file without a name (an earlier mom's) gives the
// name that mom used.
func TestNewTmpDirNames(t *testing.T) {
	set := Settings{TmpDir: "/scratch"}
	a, b := NewTmpDir(set, "12.srv"), NewTmpDir(set, "12.srv")
	if a == b || !strings.HasPrefix(a, "/scratch/pbs.12.srv.") || len(a) != len("/scratch/pbs.12.srv.")+12 {
		t.Errorf("NewTmpDir gave %q and %q", a, b)
	}
	jf := JobFile{Settings: set}
	jf.JobID = "12.srv"
	if got := jf.TmpDirPath(); got != "/scratch/pbs.12.srv" {
		t.Errorf("an earlier mom's job file: TmpDirPath %q", got)
	}
	jf.TmpDir = a
	if got := jf.TmpDirPath(); got != a {
		t.Errorf("TmpDirPath %q, want the recorded %q", got, a)
	}
}

func TestClosedTmpDirReplacedByLinkIsOnlyUnlinked(t *testing.T) {
	target := t.TempDir()
	os.WriteFile(filepath.Join(target, "f"), []byte("keep"), 0o644)
	path := filepath.Join(t.TempDir(), "pbs.1.srv")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	closeTmpDir(path)
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the link is still there: %v", err)
	}
	if got := held(target); len(got) != 1 {
		t.Errorf("the link's target was emptied: %q", got)
	}
}

// The owner's ACLs on their TMPDIR go when it is taken back: a default
// ACL would otherwise give them the next job's files.
func TestClosedTmpDirLosesItsACLs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pbs.1.srv")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// What setfacl -m u:65534:rwx,d:u:65534:rwx,d:o::rwx writes: the
	// kernel's POSIX ACL form (version 2; entries of tag, permissions and
	// id, the id unused but for named users).
	acl := func(entries ...[3]uint32) []byte {
		b := binary.LittleEndian.AppendUint32(nil, 2)
		for _, e := range entries {
			b = binary.LittleEndian.AppendUint16(b, uint16(e[0]))
			b = binary.LittleEndian.AppendUint16(b, uint16(e[1]))
			b = binary.LittleEndian.AppendUint32(b, e[2])
		}
		return b
	}
	const none = 0xffffffff
	entries := acl([3]uint32{0x01, 7, none}, [3]uint32{0x02, 7, 65534}, [3]uint32{0x04, 0, none}, [3]uint32{0x10, 7, none}, [3]uint32{0x20, 7, none})
	for _, name := range []string{"system.posix_acl_access", "system.posix_acl_default"} {
		if err := unix.Setxattr(dir, name, entries, 0); err != nil {
			t.Skipf("cannot set %s here: %v", name, err)
		}
	}
	closeTmpDir(dir)
	for _, name := range []string{"system.posix_acl_access", "system.posix_acl_default"} {
		if _, err := unix.Getxattr(dir, name, make([]byte, 256)); err != unix.ENODATA {
			t.Errorf("%s after closeTmpDir: %v, want none", name, err)
		}
	}
}
