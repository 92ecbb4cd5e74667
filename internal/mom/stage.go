package mom

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopbs/proto"
)

// File staging (qsub -W stagein/stageout). The copies are made by the mom
// of the job's first node: by its shepherd around the script for a run,
// by the mom itself for an early stage-in (the scheduler's stage-in
// request). Every file is opened, created, renamed and removed with the
// job owner's credentials (asUser), never through a shell, and a file is
// written to a temporary name beside its destination and renamed into
// place, so a failed copy never leaves half a file under the real name.
//
// A file on another node is read or written by that node's mom over the
// authenticated mom-to-mom channel (the cluster key), in chunks, as the
// job's owner there too, and only with the server's token for that job,
// owner, direction and path (proto.StageToken). A host that runs no mom
// is copied with scp -B when mom_priv/config names it ($rcpcmd).

// stageChunk is the size of one frame of a mom-to-mom copy: bounded, so
// a large file streams without being held in memory.
const stageChunk = 256 << 10

// defaultStageTimeout bounds how long a copy may make no progress.
const defaultStageTimeout = 60 * time.Second

// stageConfig is what a copy needs beyond the job: this mom's identity,
// its settings and where undeliverable files go. The mom writes it to a
// job's directory (fileStage) for the job's shepherd.
type stageConfig struct {
	Node    string        `json:"node"`
	KeyFile string        `json:"key_file"`
	Timeout time.Duration `json:"timeout"`
	Rcp     string        `json:"rcp,omitempty"` // scp's path, "" when scp is not allowed
	Spool   string        `json:"spool"`         // PBS_HOME/undelivered
}

// stager copies one job's files.
type stager struct {
	cfg    stageConfig
	key    []byte
	job    *proto.MomJob
	usr    *account
	dir    string       // the job's working directory: relative local paths start here
	cancel func() error // non-nil when the copy must stop (the job was deleted, the mom stops)
}

// errStalled is a copy that made no progress for the stage timeout.
var errStalled = errors.New("no progress")

func (s *stager) timeout() time.Duration {
	if s.cfg.Timeout > 0 {
		return s.cfg.Timeout
	}
	return defaultStageTimeout
}

// localPath is a local file's path: relative ones start in the job's
// working directory.
func (s *stager) localPath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.dir, p)
}

// hereRemote is the path of a remote file that is on this host: relative
// ones start in the owner's home, as rcp and scp take them.
func (s *stager) hereRemote(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.usr.Home, p)
}

// describe names a file of a list for messages: local@host:remote.
func describe(f proto.StageFile) string { return f.Local + "@" + f.Host + ":" + f.Remote }

// stageIn copies every stage-in file; the first failure stops it and
// names the file.
func (s *stager) stageIn(files []proto.StageFile) error {
	for _, f := range files {
		if err := s.in(f); err != nil {
			return fmt.Errorf("stage-in of %s failed: %w", describe(f), err)
		}
	}
	return nil
}

// in copies one stage-in file to its local path.
func (s *stager) in(f proto.StageFile) error {
	dst := s.localPath(f.Local)
	switch {
	case f.Here:
		return s.copyLocal(s.hereRemote(f.Remote), dst)
	case f.Addr != "":
		return s.get(f, dst)
	case s.cfg.Rcp != "":
		return s.scp(f.Host+":"+f.Remote, dst)
	}
	return errUnreachable(f)
}

// out copies one stage-out file from its local path.
func (s *stager) out(f proto.StageFile) error {
	src := s.localPath(f.Local)
	switch {
	case f.Here:
		return s.copyLocal(src, s.hereRemote(f.Remote))
	case f.Addr != "":
		return s.put(f, src)
	case s.cfg.Rcp != "":
		return s.scp(src, f.Host+":"+f.Remote)
	}
	return errUnreachable(f)
}

// errUnreachable names a file whose host this mom has no way to: no mom
// of the cluster runs there, no $usecp line names it, and scp is not
// allowed.
func errUnreachable(f proto.StageFile) error {
	return fmt.Errorf("host %s runs no pbs_mom of this cluster, no $usecp line of this mom names %s:%s, and this mom does not copy with scp ($rcpcmd in mom_priv/config)", f.Host, f.Host, f.Remote)
}

// stageOut copies every stage-out file and removes each copied source. A
// file that cannot be copied is moved to the spool (PBS_HOME/undelivered/
// <job>, owned by the job's owner). It returns the spool directory when
// anything went there, and the failures, one sentence each.
func (s *stager) stageOut(files []proto.StageFile) (spool string, failures []string) {
	for _, f := range files {
		src := s.localPath(f.Local)
		err := s.out(f)
		if err == nil {
			if !(f.Here && s.sameFile(src, s.hereRemote(f.Remote))) {
				s.remove(src)
			}
			continue
		}
		why := fmt.Sprintf("stage-out of %s failed: %v", describe(f), err)
		dir, serr := s.toSpool(src)
		if serr != nil {
			why += fmt.Sprintf("; the file stays at %s (%v)", src, serr)
		} else {
			spool = dir
		}
		failures = append(failures, why)
	}
	if spool != "" {
		failures = append(failures, "kept in "+spool)
	}
	return spool, failures
}

// removeStagedIn removes the stage-in files after the job, as PBS does;
// a file that is its own source (a local copy onto itself) stays.
func (s *stager) removeStagedIn(files []proto.StageFile) {
	for _, f := range files {
		dst := s.localPath(f.Local)
		if f.Here && s.sameFile(dst, s.hereRemote(f.Remote)) {
			continue
		}
		s.remove(dst)
	}
}

// remove unlinks path as the owner, ignoring a file already gone.
func (s *stager) remove(path string) {
	asUser(s.usr, func() error { return syscall.Unlink(path) })
}

// sameFile reports whether a and b are one file (as the owner sees them).
func (s *stager) sameFile(a, b string) bool {
	var sa, sb syscall.Stat_t
	err := asUser(s.usr, func() error {
		if err := syscall.Stat(a, &sa); err != nil {
			return err
		}
		return syscall.Stat(b, &sb)
	})
	return err == nil && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// makeSpool makes the spool of undeliverable files (PBS_HOME/undelivered):
// the mom's own (root's) and mode 0711, so that only the mom creates
// entries in it and an owner reaches the directory of a job without
// seeing the others. It was world-writable once (sticky, as /tmp), where
// another user could take a job's name first: an existing spool is
// taken back.
func makeSpool(dir string) error {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return fmt.Errorf("spool %s is not a directory", dir)
	}
	if euid := syscall.Geteuid(); st.Uid != uint32(euid) {
		if err := syscall.Lchown(dir, euid, syscall.Getegid()); err != nil {
			return fmt.Errorf("spool %s: %w", dir, err)
		}
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// toSpool moves a file whose stage-out failed into the owner's spool
// directory for the job and returns that directory. The mom creates the
// directory and gives it to the owner (mode 0700): no one else can create
// entries in the spool, so no one can have taken the job's name first.
func (s *stager) toSpool(src string) (string, error) {
	if s.cfg.Spool == "" {
		return "", errors.New("no spool directory")
	}
	dir := filepath.Join(s.cfg.Spool, s.job.JobID)
	if err := s.spoolDir(dir); err != nil {
		return "", fmt.Errorf("spool %s: %w", dir, err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	for i := 1; s.exists(dst); i++ {
		dst = filepath.Join(dir, filepath.Base(src)+"."+strconv.Itoa(i))
	}
	if err := s.copyLocal(src, dst); err != nil {
		return "", err
	}
	s.remove(src)
	return dir, nil
}

// spoolDir makes dir the owner's: created by the mom, then given to the
// owner; one left by an earlier run of the job must be the owner's
// directory already.
func (s *stager) spoolDir(dir string) error {
	created := true
	if err := syscall.Mkdir(dir, 0o700); err == syscall.EEXIST {
		created = false
	} else if err != nil {
		return err
	}
	root := syscall.Geteuid() == 0
	if created && root {
		if err := syscall.Lchown(dir, int(s.usr.UID), int(s.usr.GID)); err != nil {
			syscall.Rmdir(dir)
			return err
		}
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || root && st.Uid != s.usr.UID {
		return fmt.Errorf("%s is not the owner's directory", dir)
	}
	return nil
}

func (s *stager) exists(path string) bool {
	var st syscall.Stat_t
	return asUser(s.usr, func() error { return syscall.Lstat(path, &st) }) == nil
}

// openSource opens a file to copy from, as the owner; it must be a
// regular file (directories are not staged).
func (s *stager) openSource(path string) (*os.File, uint32, error) {
	fd, err := openAsUser(s.usr, path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot open %s: %w", path, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	return os.NewFile(uintptr(fd), path), st.Mode & 0o777, nil
}

// createFor creates a new temporary file beside dst, as the owner, and
// returns it with the function that puts it in place under dst's name
// (or removes it, on failure).
func createFor(usr *account, dst string) (*os.File, func(mode uint32, ok bool) error, error) {
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".pbs-stage-"+hex.EncodeToString(rnd[:]))
	fd, err := openAsUser(usr, tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create %s: %w", dst, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	finish := func(mode uint32, ok bool) error {
		if ok {
			if err := f.Sync(); err != nil {
				f.Close()
				asUser(usr, func() error { return syscall.Unlink(tmp) })
				return fmt.Errorf("write %s: %w", dst, err)
			}
			if mode != 0 {
				f.Chmod(os.FileMode(mode & 0o777))
			}
		}
		cerr := f.Close()
		if !ok || cerr != nil {
			asUser(usr, func() error { return syscall.Unlink(tmp) })
			if cerr != nil {
				return fmt.Errorf("write %s: %w", dst, cerr)
			}
			return nil
		}
		// rename replaces whatever is at dst, a symlink included, without
		// following it.
		if err := asUser(usr, func() error { return syscall.Rename(tmp, dst) }); err != nil {
			asUser(usr, func() error { return syscall.Unlink(tmp) })
			return fmt.Errorf("cannot create %s: %w", dst, err)
		}
		return nil
	}
	return f, finish, nil
}

// copyLocal copies src to dst on this host. A file copied onto itself is
// left alone.
func (s *stager) copyLocal(src, dst string) error {
	if s.sameFile(src, dst) {
		return nil
	}
	in, mode, err := s.openSource(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, finish, err := createFor(s.usr, dst)
	if err != nil {
		return err
	}
	err = copyWatched(out, in, s.timeout(), s.cancel, func() { in.Close(); out.Close() })
	if ferr := finish(mode, err == nil); err == nil {
		err = ferr
	}
	return err
}

// copyWatched copies src to dst in chunks, stopping when cancel says so
// or when no chunk moved for stall (abort then closes both ends, which
// unblocks the copy where the file system allows it).
func copyWatched(dst io.Writer, src io.Reader, stall time.Duration, cancel func() error, abort func()) error {
	progress := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, stageChunk)
		for {
			n, rerr := src.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					done <- werr
					return
				}
				select {
				case progress <- struct{}{}:
				default:
				}
			}
			if rerr == io.EOF {
				done <- nil
				return
			}
			if rerr != nil {
				done <- rerr
				return
			}
		}
	}()
	tick := time.NewTicker(min(stall, time.Second))
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case err := <-done:
			return err
		case <-progress:
			last = time.Now()
		case <-tick.C:
			if cancel != nil {
				if err := cancel(); err != nil {
					abort()
					<-done
					return err
				}
			}
			if time.Since(last) > stall {
				abort()
				return fmt.Errorf("%w for %s", errStalled, stall)
			}
		}
	}
}

// dialMom opens an authenticated connection to another mom.
func (s *stager) dialMom(addr string) (*proto.Conn, error) {
	if s.key == nil {
		key, err := proto.LoadKey(s.cfg.KeyFile)
		if err != nil {
			return nil, err
		}
		s.key = key
	}
	nc, err := net.DialTimeout("tcp", addr, s.timeout())
	if err != nil {
		return nil, fmt.Errorf("cannot reach the mom at %s: %w", addr, err)
	}
	c := proto.NewConn(nc, 0)
	nc.SetDeadline(time.Now().Add(s.timeout()))
	if _, err := proto.ClientHandshake(c, proto.RoleMom, s.cfg.Node, s.key); err != nil {
		nc.Close()
		return nil, fmt.Errorf("handshake with the mom at %s: %w", addr, err)
	}
	return c, nil
}

// get reads a file from another mom into dst.
func (s *stager) get(f proto.StageFile, dst string) error {
	c, err := s.dialMom(f.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	req := &proto.FileRequest{JobID: s.job.JobID, User: s.job.EUser, Group: s.job.EGroup, Path: f.Remote, Token: f.Token}
	if err := c.Send(proto.Header{Type: proto.MsgMomFileGet, Seq: 1}, req); err != nil {
		return fmt.Errorf("ask %s: %w", f.Node, err)
	}
	out, finish, err := createFor(s.usr, dst)
	if err != nil {
		return err
	}
	mode := uint32(0)
	err = func() error {
		for {
			if s.cancel != nil {
				if err := s.cancel(); err != nil {
					return err
				}
			}
			c.NetConn().SetDeadline(time.Now().Add(s.timeout()))
			h, raw, err := c.Recv()
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					return fmt.Errorf("%w from %s for %s", errStalled, f.Node, s.timeout())
				}
				return fmt.Errorf("read from %s: %w", f.Node, err)
			}
			if h.Type != proto.MsgReply || h.Seq != 1 {
				return fmt.Errorf("%s answered %s", f.Node, h.Type)
			}
			if h.Code != proto.PBSE_NONE {
				return fmt.Errorf("%s: %s", f.Node, h.Text)
			}
			var ch proto.FileChunk
			if err := proto.DecodeBody(raw, &ch); err != nil {
				return fmt.Errorf("from %s: %w", f.Node, err)
			}
			if ch.Mode != 0 {
				mode = ch.Mode
			}
			if _, err := out.Write(ch.Data); err != nil {
				return fmt.Errorf("write %s: %w", dst, err)
			}
			if !h.More {
				return nil
			}
		}
	}()
	if ferr := finish(mode, err == nil); err == nil {
		err = ferr
	}
	return err
}

// put writes src to another mom.
func (s *stager) put(f proto.StageFile, src string) error {
	in, mode, err := s.openSource(src)
	if err != nil {
		return err
	}
	defer in.Close()
	c, err := s.dialMom(f.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	stalled := func(err error) error {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return fmt.Errorf("%w towards %s for %s", errStalled, f.Node, s.timeout())
		}
		return fmt.Errorf("%s: %w", f.Node, err)
	}
	answer := func() error {
		c.NetConn().SetDeadline(time.Now().Add(s.timeout()))
		h, _, err := c.Recv()
		switch {
		case err != nil:
			return stalled(err)
		case h.Type != proto.MsgReply || h.Seq != 1:
			return fmt.Errorf("%s answered %s", f.Node, h.Type)
		case h.Code != proto.PBSE_NONE:
			return fmt.Errorf("%s: %s", f.Node, h.Text)
		}
		return nil
	}
	req := &proto.FileRequest{JobID: s.job.JobID, User: s.job.EUser, Group: s.job.EGroup, Path: f.Remote, Token: f.Token}
	c.NetConn().SetDeadline(time.Now().Add(s.timeout()))
	if err := c.Send(proto.Header{Type: proto.MsgMomFilePut, Seq: 1}, req); err != nil {
		return stalled(err)
	}
	if err := answer(); err != nil {
		return err
	}
	buf := make([]byte, stageChunk)
	first := true
	for {
		if s.cancel != nil {
			if err := s.cancel(); err != nil {
				return err
			}
		}
		n, rerr := io.ReadFull(in, buf)
		last := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		if rerr != nil && !last {
			return fmt.Errorf("read %s: %w", src, rerr)
		}
		ch := proto.FileChunk{Data: buf[:n]}
		if first {
			ch.Mode, first = mode, false
		}
		c.NetConn().SetDeadline(time.Now().Add(s.timeout()))
		if err := c.Send(proto.Header{Type: proto.MsgMomFileData, Seq: 1, More: !last}, &ch); err != nil {
			return stalled(err)
		}
		if last {
			return answer()
		}
	}
}

// scp copies with the admin's scp ($rcpcmd) as the job's owner: batch
// mode (never a password prompt), a bounded connect and a peer that stops
// answering detected within a minute. Arguments are passed as argv after
// "--", never through a local shell; a remote path is refused when a
// remote shell could read it as more than a name.
func (s *stager) scp(from, to string) error {
	for _, p := range []string{from, to} {
		if host, path, ok := strings.Cut(p, ":"); ok && !filepath.IsAbs(host) && !strings.Contains(host, "/") {
			if strings.ContainsAny(path, " \t'\"\\$`;&|<>*?[]{}()!~#") {
				return fmt.Errorf("scp: remote path %q holds characters a remote shell would interpret; stage it through a host that runs pbs_mom", path)
			}
		}
	}
	cmd := exec.Command(s.cfg.Rcp, scpArgs(from, to, s.timeout())...)
	cmd.Env = []string{"HOME=" + s.usr.Home, "USER=" + s.usr.Name, "LOGNAME=" + s.usr.Name, "PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.Dir = s.usr.Home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if os.Geteuid() == 0 && s.usr.UID != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: s.usr.UID, Gid: s.usr.GID, Groups: s.usr.Groups}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return fmt.Errorf("%s: %w: %s", s.cfg.Rcp, err, msg)
	}
	return nil
}

// scpArgs is scp's argv (after the program).
func scpArgs(from, to string, stall time.Duration) []string {
	secs := strconv.Itoa(max(int(stall/time.Second), 1))
	return []string{"-B", "-q", "-p",
		"-o", "BatchMode=yes", "-o", "ConnectTimeout=" + secs,
		"-o", "ServerAliveInterval=" + strconv.Itoa(max(int(stall/time.Second)/4, 1)), "-o", "ServerAliveCountMax=4",
		"--", from, to}
}
