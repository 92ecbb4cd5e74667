package mom

import (
	"syscall"

	"github.com/vmihailenco/msgpack/v5"
)

// rawMessage is an encoded body sent as is.
type rawMessage = msgpack.RawMessage

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// setChildSubreaper makes this process the parent of its descendants'
// orphans instead of init.
func setChildSubreaper() error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return e
	}
	return nil
}
