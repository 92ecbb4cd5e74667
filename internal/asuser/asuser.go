package asuser

import (
	"runtime"
	"syscall"
)

// Run runs fn with the file-system identity of usr: uid, gid and
// supplementary groups, so that every path fn opens, creates, renames or
// removes is checked as the owner's (a root mom never touches a user's
// files with its own rights). Linux keeps credentials per thread, so the
// switch is made with raw system calls on a thread locked for the
// purpose; the goroutine ends without unlocking, which makes the runtime
// discard that thread, so no other goroutine ever runs with the user's
// identity. fn must do its work with direct system calls on that thread
// (no goroutines of its own). When the process is not root, or usr is
// root, fn runs as the process.
func Run(usr *Account, fn func() error) error {
	if syscall.Geteuid() != 0 || usr.UID == 0 {
		return fn()
	}
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread dies with the goroutine.
		groups := make([]uint32, len(usr.Groups))
		copy(groups, usr.Groups)
		var gp uintptr
		if len(groups) > 0 {
			gp = uintptrOf(&groups[0])
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, uintptr(len(groups)), gp, 0); e != 0 {
			ch <- e
			return
		}
		syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(usr.GID), 0, 0)
		syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(usr.UID), 0, 0)
		// setfs[ug]id report no error; check that the switch happened.
		if cur, _, _ := syscall.RawSyscall(syscall.SYS_SETFSUID, ^uintptr(0), 0, 0); uint32(cur) != usr.UID {
			ch <- syscall.EPERM
			return
		}
		ch <- fn()
	}()
	return <-ch
}

// Open opens path with the file-system identity of usr (Run).
func Open(usr *Account, path string, flags int, mode uint32) (int, error) {
	fd := -1
	err := Run(usr, func() error {
		var err error
		fd, err = syscall.Open(path, flags, mode)
		return err
	})
	return fd, err
}
