package proto

import (
	"fmt"
	"net"
	"syscall"
)

// PeerCreds returns the uid and gid of the process at the other end of a
// Unix socket connection, as the kernel recorded them (SO_PEERCRED): the
// only identity a local caller is trusted with.
func PeerCreds(nc net.Conn) (uid, gid uint32, err error) {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return 0, 0, fmt.Errorf("peer credentials need a unix socket, not %T", nc)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if credErr != nil {
		return 0, 0, credErr
	}
	return cred.Uid, cred.Gid, nil
}
