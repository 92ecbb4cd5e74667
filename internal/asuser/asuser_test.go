package asuser

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Current is the process's own account.
func TestCurrent(t *testing.T) {
	me, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	if me.UID != uint32(os.Geteuid()) || me.Name == "" || me.Home == "" || me.Shell == "" {
		t.Errorf("%+v, want this process's user", me)
	}
}

// A file the owner may not read stays closed to Open as the owner, even
// from a root process, and the process keeps its own rights after.
func TestOpenChecksAsTheOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	nobody, err := Lookup("nobody", "")
	if err != nil {
		t.Skip("no user nobody:", err)
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(nobody, secret, syscall.O_RDONLY|syscall.O_CLOEXEC, 0); !errors.Is(err, syscall.EACCES) {
		t.Errorf("open as nobody: %v, want EACCES", err)
	}
	fd, err := syscall.Open(secret, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open as the process after: %v", err)
	}
	syscall.Close(fd)
}
