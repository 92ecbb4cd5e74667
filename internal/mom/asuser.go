package mom

import (
	"runtime"
	"syscall"
)

// openAsUser opens path with the file-system identity of usr: uid, gid and
// supplementary groups. Linux keeps credentials per thread, so the switch
// is made with raw system calls on a thread locked for the purpose; the
// goroutine ends without unlocking, which makes the runtime discard that
// thread, so no other goroutine ever runs with the user's identity. When
// the process is not root it opens path as itself.
func openAsUser(usr *account, path string, flags int, mode uint32) (int, error) {
	if syscall.Geteuid() != 0 || usr.UID == 0 {
		return syscall.Open(path, flags, mode)
	}
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result, 1)
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
			ch <- result{-1, e}
			return
		}
		syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(usr.GID), 0, 0)
		syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(usr.UID), 0, 0)
		// setfs[ug]id report no error; check that the switch happened.
		if cur, _, _ := syscall.RawSyscall(syscall.SYS_SETFSUID, ^uintptr(0), 0, 0); uint32(cur) != usr.UID {
			ch <- result{-1, syscall.EPERM}
			return
		}
		fd, err := syscall.Open(path, flags, mode)
		ch <- result{fd, err}
	}()
	r := <-ch
	return r.fd, r.err
}
