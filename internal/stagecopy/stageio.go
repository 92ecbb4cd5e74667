package stagecopy

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// boundedFile is an open file of a copy whose reads, writes and syncs each
// run on a goroutine of their own, waited for at most the stall: a file
// system that stops answering (a dead NFS server, a FUSE program that
// hangs) then fails the copy with errStalled instead of holding, forever,
// the goroutine that copies: a job's stage-in, which a qdel must be able
// to end, or another mom's transfer, with its connection and its slot of
// this mom's connection budget. cancel, when set, is asked every second
// meanwhile (a job deleted, a mom stopping).
//
// An operation given up on keeps its goroutine, blocked in the kernel,
// and the buffer it was given: the file is unusable from then on (every
// later call fails at once), and the buffer is never handed to anyone
// else.
type boundedFile struct {
	f      *os.File
	stall  time.Duration
	cancel func() error
	buf    []byte // the operations' own buffer
	broken error  // set once an operation was given up on
}

func newBoundedFile(f *os.File, stall time.Duration, cancel func() error) *boundedFile {
	return &boundedFile{f: f, stall: stall, cancel: cancel}
}

// call runs op and waits for it as the type says.
func (b *boundedFile) call(what string, op func() error) error {
	if b.broken != nil {
		return b.broken
	}
	done := make(chan error, 1)
	go func() { done <- op() }()
	tick := time.NewTicker(min(b.stall, time.Second))
	defer tick.Stop()
	deadline := time.Now().Add(b.stall)
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			var err error
			if b.cancel != nil {
				err = b.cancel()
			}
			if err == nil && !time.Now().Before(deadline) {
				err = fmt.Errorf("%w: %s of %s took longer than %s", errStalled, what, b.f.Name(), b.stall)
			}
			if err != nil {
				b.broken, b.buf = err, nil
				return err
			}
		}
	}
}

// scratch is the operations' buffer, of n bytes.
func (b *boundedFile) scratch(n int) []byte {
	if cap(b.buf) < n {
		b.buf = make([]byte, n)
	}
	return b.buf[:n]
}

func (b *boundedFile) Read(p []byte) (int, error) {
	buf := b.scratch(len(p))
	var n int
	err := b.call("read", func() (err error) { n, err = b.f.Read(buf); return })
	if b.broken != nil {
		return 0, err
	}
	return copy(p, buf[:n]), err
}

func (b *boundedFile) Write(p []byte) (int, error) {
	buf := b.scratch(len(p))
	copy(buf, p)
	var n int
	err := b.call("write", func() (err error) { n, err = b.f.Write(buf); return })
	if b.broken != nil {
		return 0, err
	}
	return n, err
}

// Sync makes what was written durable.
func (b *boundedFile) Sync() error { return b.call("sync", b.f.Sync) }

// Chmod sets the file's permission bits.
func (b *boundedFile) Chmod(mode os.FileMode) error {
	return b.call("chmod", func() error { return b.f.Chmod(mode) })
}

// Close closes the file. It does not wait for an operation given up on
// (the descriptor is released once that operation returns).
func (b *boundedFile) Close() error { return b.f.Close() }

// fileKind names the type of a file that is not a regular one, for
// messages.
func fileKind(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return "fifo"
	case syscall.S_IFDIR:
		return "directory"
	case syscall.S_IFCHR:
		return "character device"
	case syscall.S_IFBLK:
		return "block device"
	case syscall.S_IFSOCK:
		return "socket"
	case syscall.S_IFLNK:
		return "symbolic link"
	case syscall.S_IFREG:
		return "regular file"
	}
	return fmt.Sprintf("file of type %#o", mode&syscall.S_IFMT)
}
