package stagecopy

import (
	"context"
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

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/proto"
)

// ChunkSize is the size of one frame of a mom-to-mom copy: bounded, so
// a large file streams without being held in memory.
const ChunkSize = 256 << 10

// defaultStageTimeout bounds how long a copy may make no progress.
const defaultStageTimeout = 60 * time.Second

// Config is what a copy needs beyond the job: this mom's identity,
// its settings and where undeliverable files go. The mom writes it to a
// job's directory (fileStage) for the job's shepherd.
type Config struct {
	Node    string        `json:"node"`
	KeyFile string        `json:"key_file"`
	Timeout time.Duration `json:"timeout"`
	Rcp     string        `json:"rcp,omitempty"` // scp's path, "" when scp is not allowed
	Spool   string        `json:"spool"`         // PBS_HOME/undelivered
	// Partials is mom_priv/partials, where each copy records its partial
	// file ("" records none: a job file of an earlier mom).
	Partials string `json:"partials,omitempty"`
}

// Stager copies one job's files. The shepherd makes one for a job's
// stage-in and stage-out, the mom one for an early stage-in and one for
// each file another mom asks it for.
type Stager struct {
	Cfg    Config
	Key    []byte // the cluster key; nil: read from Cfg.KeyFile when needed
	Job    *proto.MomJob
	Usr    *asuser.Account // the job's owner, as whom every file is copied
	Dir    string          // the job's working directory: relative local paths start here
	Cancel func() error    // non-nil when the copy must stop (the job was deleted, the mom stops)
}

// errStalled is a copy that made no progress for the stage timeout.
var errStalled = errors.New("no progress")

func (s *Stager) Timeout() time.Duration {
	if s.Cfg.Timeout > 0 {
		return s.Cfg.Timeout
	}
	return defaultStageTimeout
}

// localPath is a local file's path: relative ones start in the job's
// working directory.
func (s *Stager) localPath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.Dir, p)
}

// hereRemote is the path of a remote file that is on this host: relative
// ones start in the owner's home, as rcp and scp take them.
func (s *Stager) hereRemote(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.Usr.Home, p)
}

// describe names a file of a list for messages: local@host:remote.
func describe(f proto.StageFile) string { return f.Local + "@" + f.Host + ":" + f.Remote }

// stageIn copies every stage-in file; the first failure stops it and
// names the file.
func (s *Stager) StageIn(files []proto.StageFile) error {
	for _, f := range files {
		if err := s.in(f); err != nil {
			return fmt.Errorf("stage-in of %s failed: %w", describe(f), err)
		}
	}
	return nil
}

// in copies one stage-in file to its local path.
func (s *Stager) in(f proto.StageFile) error {
	dst := s.localPath(f.Local)
	switch {
	case f.Here:
		return s.copyLocal(s.hereRemote(f.Remote), dst)
	case f.Addr != "":
		return s.get(f, dst)
	case s.Cfg.Rcp != "":
		return s.scp(f.Host+":"+f.Remote, dst)
	}
	return errUnreachable(f)
}

// out copies one stage-out file from its local path.
func (s *Stager) out(f proto.StageFile) error {
	src := s.localPath(f.Local)
	switch {
	case f.Here:
		return s.copyLocal(src, s.hereRemote(f.Remote))
	case f.Addr != "":
		return s.put(f, src)
	case s.Cfg.Rcp != "":
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
func (s *Stager) StageOut(files []proto.StageFile) (spool string, failures []string) {
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
func (s *Stager) RemoveStagedIn(files []proto.StageFile) {
	for _, f := range files {
		dst := s.localPath(f.Local)
		if f.Here && s.sameFile(dst, s.hereRemote(f.Remote)) {
			continue
		}
		s.remove(dst)
	}
}

// remove unlinks path as the owner, ignoring a file already gone.
func (s *Stager) remove(path string) {
	asuser.Run(s.Usr, func() error { return syscall.Unlink(path) })
}

// sameFile reports whether a and b are one file (as the owner sees them).
func (s *Stager) sameFile(a, b string) bool {
	var sa, sb syscall.Stat_t
	err := asuser.Run(s.Usr, func() error {
		if err := syscall.Stat(a, &sa); err != nil {
			return err
		}
		return syscall.Stat(b, &sb)
	})
	return err == nil && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// MakeSpool makes the spool of undeliverable files (PBS_HOME/undelivered):
// the mom's own (root's) and mode 0711, so that only the mom creates
// entries in it and an owner reaches the directory of a job without
// seeing the others. It was world-writable once (sticky, as /tmp), where
// another user could take a job's name first: an existing spool is
// taken back.
func MakeSpool(dir string) error {
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
func (s *Stager) toSpool(src string) (string, error) {
	if s.Cfg.Spool == "" {
		return "", errors.New("no spool directory")
	}
	dir := filepath.Join(s.Cfg.Spool, s.Job.JobID)
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
func (s *Stager) spoolDir(dir string) error {
	created := true
	if err := syscall.Mkdir(dir, 0o700); err == syscall.EEXIST {
		created = false
	} else if err != nil {
		return err
	}
	root := syscall.Geteuid() == 0
	if created && root {
		if err := syscall.Lchown(dir, int(s.Usr.UID), int(s.Usr.GID)); err != nil {
			syscall.Rmdir(dir)
			return err
		}
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || root && st.Uid != s.Usr.UID {
		return fmt.Errorf("%s is not the owner's directory", dir)
	}
	return nil
}

func (s *Stager) exists(path string) bool {
	var st syscall.Stat_t
	return asuser.Run(s.Usr, func() error { return syscall.Lstat(path, &st) }) == nil
}

// openSource opens a file to copy from, as the owner, and returns it
// with its permission bits and size. Only a regular file is copied, and
// its type is checked on the open descriptor, not on the path. The open
// itself must not wait: a FIFO's open waits for a writer, forever if none
// comes, and a device's may wait for a carrier, so it is made with
// O_NONBLOCK (and O_NOCTTY: a terminal never becomes the mom's), and the
// file is read in blocking mode once it is known to be regular. A copy
// reads no more than the size the file had when opened: one that keeps
// growing cannot keep its copy going.
func (s *Stager) openSource(path string) (*boundedFile, uint32, int64, error) {
	fd, err := asuser.Open(s.Usr, path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("cannot open %s: %w", path, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, 0, 0, fmt.Errorf("cannot copy %s: not a regular file: %s", path, fileKind(st.Mode))
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	f := newBoundedFile(os.NewFile(uintptr(fd), path), s.Timeout(), s.Cancel)
	return f, st.Mode & 0o777, st.Size, nil
}

// create creates a new temporary file beside dst, as the owner, recorded
// in mom_priv/partials first (partials.go), and returns it with the
// function that puts it in place under dst's name (or removes it, on
// failure).
func (s *Stager) create(dst string) (*boundedFile, func(mode uint32, ok bool) error, error) {
	var rnd [partialHexLen / 2]byte
	rand.Read(rnd[:])
	suffix := hex.EncodeToString(rnd[:])
	tmp := partialName(dst, suffix)
	usr := s.Usr
	endRecord, err := beginPartial(s.Cfg.Partials, usr, tmp, suffix)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create %s: %w", dst, err)
	}
	fd, err := asuser.Open(usr, tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		endRecord()
		return nil, nil, fmt.Errorf("cannot create %s: %w", dst, err)
	}
	f := newBoundedFile(os.NewFile(uintptr(fd), tmp), s.Timeout(), s.Cancel)
	unlink := func() { asuser.Run(usr, func() error { return syscall.Unlink(tmp) }) }
	finish := func(mode uint32, ok bool) error {
		defer endRecord()
		if ok {
			if err := f.Sync(); err != nil {
				f.Close()
				unlink()
				return fmt.Errorf("write %s: %w", dst, err)
			}
			if mode != 0 {
				f.Chmod(os.FileMode(mode & 0o777))
			}
		}
		cerr := f.Close()
		if !ok || cerr != nil {
			unlink()
			if cerr != nil {
				return fmt.Errorf("write %s: %w", dst, cerr)
			}
			return nil
		}
		// rename replaces whatever is at dst, a symlink included, without
		// following it.
		if err := asuser.Run(usr, func() error { return syscall.Rename(tmp, dst) }); err != nil {
			unlink()
			return fmt.Errorf("cannot create %s: %w", dst, err)
		}
		return nil
	}
	return f, finish, nil
}

// copyLocal copies src to dst on this host. A file copied onto itself is
// left alone.
func (s *Stager) copyLocal(src, dst string) error {
	if s.sameFile(src, dst) {
		return nil
	}
	in, mode, size, err := s.openSource(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, finish, err := s.create(dst)
	if err != nil {
		return err
	}
	_, err = io.CopyBuffer(out, io.LimitReader(in, size), make([]byte, ChunkSize))
	if ferr := finish(mode, err == nil); err == nil {
		err = ferr
	}
	return err
}

// dialMom opens an authenticated connection to another mom.
func (s *Stager) dialMom(addr string) (*proto.Conn, error) {
	if s.Key == nil {
		key, err := proto.LoadKey(s.Cfg.KeyFile)
		if err != nil {
			return nil, err
		}
		s.Key = key
	}
	nc, err := net.DialTimeout("tcp", addr, s.Timeout())
	if err != nil {
		return nil, fmt.Errorf("cannot reach the mom at %s: %w", addr, err)
	}
	c := proto.NewConn(nc, 0)
	nc.SetDeadline(time.Now().Add(s.Timeout()))
	if _, err := proto.ClientHandshake(c, proto.RoleMom, s.Cfg.Node, s.Key); err != nil {
		nc.Close()
		return nil, fmt.Errorf("handshake with the mom at %s: %w", addr, err)
	}
	return c, nil
}

// get reads a file from another mom into dst.
func (s *Stager) get(f proto.StageFile, dst string) error {
	c, err := s.dialMom(f.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	req := &proto.FileRequest{JobID: s.Job.JobID, User: s.Job.EUser, Group: s.Job.EGroup, Path: f.Remote, Token: f.Token}
	if err := c.Send(proto.Header{Type: proto.MsgMomFileGet, Seq: 1}, req); err != nil {
		return fmt.Errorf("ask %s: %w", f.Node, err)
	}
	out, finish, err := s.create(dst)
	if err != nil {
		return err
	}
	mode, err := receiveChunks(c, out, proto.MsgReply, 1, s.Timeout(), s.Cancel)
	var pe *proto.Error
	var ce connError
	switch {
	case isTimeout(err):
		err = fmt.Errorf("%w from %s for %s", errStalled, f.Node, s.Timeout())
	case errors.As(err, &ce):
		err = fmt.Errorf("read from %s: %w", f.Node, ce.err)
	case errors.As(err, &pe):
		// What the other mom said (the file cannot be read there), or
		// a frame it should not have sent.
		err = fmt.Errorf("%s: %s", f.Node, pe.Text)
	}
	if ferr := finish(mode, err == nil); err == nil {
		err = ferr
	}
	return err
}

// put writes src to another mom.
func (s *Stager) put(f proto.StageFile, src string) error {
	in, mode, size, err := s.openSource(src)
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
		if isTimeout(err) {
			return fmt.Errorf("%w towards %s for %s", errStalled, f.Node, s.Timeout())
		}
		return fmt.Errorf("%s: %w", f.Node, err)
	}
	answer := func() error {
		c.NetConn().SetDeadline(time.Now().Add(s.Timeout()))
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
	req := &proto.FileRequest{JobID: s.Job.JobID, User: s.Job.EUser, Group: s.Job.EGroup, Path: f.Remote, Token: f.Token}
	c.NetConn().SetDeadline(time.Now().Add(s.Timeout()))
	if err := c.Send(proto.Header{Type: proto.MsgMomFilePut, Seq: 1}, req); err != nil {
		return stalled(err)
	}
	if err := answer(); err != nil {
		return err
	}
	if err := sendChunks(c, in, size, mode, proto.MsgMomFileData, 1, s.Timeout(), s.Cancel); err != nil {
		var ce connError
		if errors.As(err, &ce) {
			return stalled(ce.err)
		}
		return err // the file's own error names it, or the copy had to stop
	}
	return answer()
}

// connError is a frame of a transfer that could not be sent or received
// (op says which), as distinct from the files' errors.
type connError struct {
	op  string
	err error
}

func (e connError) Error() string { return e.op + ": " + e.err.Error() }
func (e connError) Unwrap() error { return e.err }

// isTimeout reports whether err is a connection's deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// sendChunks streams at most size bytes of in to the other end of c as
// frames of type typ (the first with the file's mode), each sent within
// stall; cancel is asked between frames. A frame that cannot be sent is a
// connError.
func sendChunks(c *proto.Conn, in io.Reader, size int64, mode uint32, typ proto.MsgType, seq uint64, stall time.Duration, cancel func() error) error {
	in = io.LimitReader(in, size)
	buf := make([]byte, ChunkSize)
	first := true
	for {
		if cancel != nil {
			if err := cancel(); err != nil {
				return err
			}
		}
		n, rerr := io.ReadFull(in, buf)
		last := errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)
		if rerr != nil && !last {
			return rerr // names the file (an *fs.PathError, or boundedFile's)
		}
		ch := proto.FileChunk{Data: buf[:n]}
		if first {
			ch.Mode, first = mode, false
		}
		c.NetConn().SetDeadline(time.Now().Add(stall))
		if err := c.Send(proto.Header{Type: typ, Seq: seq, More: !last}, &ch); err != nil {
			return connError{"send", err}
		}
		if last {
			return nil
		}
	}
}

// receiveChunks writes the frames of type typ that the other end of c
// streams into out, each received within stall, until the last; cancel
// is asked between frames. It returns the file's mode (0 when not sent).
// A frame that cannot be received is a connError; one that carries an
// error is that *proto.Error.
func receiveChunks(c *proto.Conn, out io.Writer, typ proto.MsgType, seq uint64, stall time.Duration, cancel func() error) (uint32, error) {
	mode := uint32(0)
	for {
		if cancel != nil {
			if err := cancel(); err != nil {
				return mode, err
			}
		}
		c.NetConn().SetDeadline(time.Now().Add(stall))
		h, raw, err := c.Recv()
		if err != nil {
			return mode, connError{"receive", err}
		}
		if h.Type != typ || h.Seq != seq {
			return mode, proto.Errorf(proto.PBSE_PROTOCOL, "%s in a file transfer", h.Type)
		}
		if h.Code != proto.PBSE_NONE {
			return mode, &proto.Error{Code: h.Code, Text: h.Text}
		}
		var ch proto.FileChunk
		if err := proto.DecodeBody(raw, &ch); err != nil {
			return mode, proto.Errorf(proto.PBSE_PROTOCOL, "%v", err)
		}
		if ch.Mode != 0 {
			mode = ch.Mode
		}
		if _, err := out.Write(ch.Data); err != nil {
			return mode, err // names the file (an *fs.PathError, or boundedFile's)
		}
		if !h.More {
			return mode, nil
		}
	}
}

// scp copies with the admin's scp ($rcpcmd) as the job's owner: batch
// mode (never a password prompt), a bounded connect and a peer that stops
// answering detected within a minute. Arguments are passed as argv after
// "--", never through a local shell; a remote path is refused when a
// remote shell could read it as more than a name.
func (s *Stager) scp(from, to string) error {
	for _, p := range []string{from, to} {
		if host, path, ok := strings.Cut(p, ":"); ok && !filepath.IsAbs(host) && !strings.Contains(host, "/") {
			if strings.ContainsAny(path, " \t'\"\\$`;&|<>*?[]{}()!~#") {
				return fmt.Errorf("scp: remote path %q holds characters a remote shell would interpret; stage it through a host that runs pbs_mom", path)
			}
		}
	}
	// A copy that must stop (a delete) kills scp and its ssh, its whole
	// session, rather than leave them running after the job.
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	if s.Cancel != nil {
		go func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					if err := s.Cancel(); err != nil {
						stop(err)
						return
					}
				}
			}
		}()
	}
	cmd := exec.CommandContext(ctx, s.Cfg.Rcp, scpArgs(from, to, s.Timeout())...)
	cmd.Env = []string{"HOME=" + s.Usr.Home, "USER=" + s.Usr.Name, "LOGNAME=" + s.Usr.Name, "PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.Dir = s.Usr.Home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if os.Geteuid() == 0 && s.Usr.UID != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: s.Usr.UID, Gid: s.Usr.GID, Groups: s.Usr.Groups}
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if cause := context.Cause(ctx); ctx.Err() != nil && cause != nil {
		return cause
	}
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return fmt.Errorf("%s: %w: %s", s.Cfg.Rcp, err, msg)
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

// SendFile streams the file at path to the mom that asked for it on c
// (its request was seq), as s.Usr. Every step is bounded by
// the stall (boundedFile, the connection's deadlines) and the file is
// read no further than its size when opened, so a transfer ends, and
// frees its connection and its slot, however its file or its peer
// behave.
func (s *Stager) SendFile(c *proto.Conn, seq uint64, path string) error {
	f, mode, size, err := s.openSource(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return sendChunks(c, f, size, mode, proto.MsgReply, seq, s.Timeout(), nil)
}

// ReceiveFile writes what the mom that asked on c (request seq) streams
// into path, as s.Usr, bounded as SendFile is.
func (s *Stager) ReceiveFile(c *proto.Conn, seq uint64, path string) error {
	var fi syscall.Stat_t
	if err := asuser.Run(s.Usr, func() error { return syscall.Stat(filepath.Dir(path), &fi) }); err != nil {
		return fmt.Errorf("cannot create %s: %w", path, err)
	}
	out, finish, err := s.create(path)
	if err != nil {
		return err
	}
	nc := c.NetConn()
	nc.SetDeadline(time.Now().Add(s.Timeout()))
	if err := c.Send(proto.Header{Type: proto.MsgReply, Seq: seq}, nil); err != nil {
		finish(0, false)
		return fmt.Errorf("send: %w", err)
	}
	fault.Hit(fault.MomStageReceive)
	mode, err := receiveChunks(c, out, proto.MsgMomFileData, seq, s.Timeout(), nil)
	if ferr := finish(mode, err == nil); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	nc.SetDeadline(time.Now().Add(s.Timeout()))
	return c.Send(proto.Header{Type: proto.MsgReply, Seq: seq}, nil)
}
