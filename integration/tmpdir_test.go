package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// squatter makes things at paths as another user would: on a thread of
// its own whose file-system uid and gid are that user's (setfsuid drops
// root's file capabilities for that thread alone), so the kernel checks
// and owns what it makes as that user's. The thread is never given back:
// it ends with its goroutine.
type squatter struct {
	work chan func()
	stop chan struct{}
	wg   sync.WaitGroup
}

func newSquatter(t *testing.T, uid, gid int) *squatter {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	s := &squatter{work: make(chan func()), stop: make(chan struct{})}
	ready := make(chan error, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		runtime.LockOSThread() // never unlocked: the thread is not root's any more
		syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(gid), 0, 0)
		syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(uid), 0, 0)
		// setfsuid answers with the previous id: asked again, the new one.
		if now, _, _ := syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(uid), 0, 0); int(now) != uid {
			ready <- fmt.Errorf("setfsuid(%d): still %d", uid, now)
			return
		}
		ready <- nil
		for {
			select {
			case f := <-s.work:
				f()
			case <-s.stop:
				return
			}
		}
	}()
	if err := <-ready; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

// do runs f as the squatter and waits for it (not once closed).
func (s *squatter) do(f func()) {
	done := make(chan struct{})
	select {
	case s.work <- func() { f(); close(done) }:
		<-done
	case <-s.stop:
	}
}

// race keeps a directory at path, holding files, until stop (or the
// squatter) is closed: whoever removes it finds it made again at once,
// and a removal of what it holds finds more.
func (s *squatter) race(path string, stop <-chan struct{}) {
	s.do(func() {}) // the squatter is free: the loop below starts at once
	s.work <- func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-s.stop:
				return
			default:
			}
			syscall.Mkdir(path, 0o755)
			if fd, err := syscall.Open(filepath.Join(path, "f"+strconv.Itoa(i%8)), syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644); err == nil {
				syscall.Close(fd)
			}
		}
	}
}

func (s *squatter) close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
}

// jobTmpDir is the TMPDIR a job printed ("tmpdir=<path> <uid> <mode>").
var jobTmpDir = regexp.MustCompile(`tmpdir=(\S+) (\d+) (\d+)`)

// Another user (nobody) who makes the old predictable TMPDIR path of a
// job before it starts (a directory it keeps making again as fast as it
// can, a link to a directory of theirs, a file) neither stops the job
// nor gets its files: the job starts, its TMPDIR is a new directory of
// its owner's, mode 0700, under $tmpdir, gone at its end, and what the
// other user made is left as it was (not followed, not removed). The
// TMPDIR's name is the one the job's mom recorded, also after a restart
// of the mom while the job runs. The old shepherd removed what it found
// at pbs.<jobid> and made the directory there, which a user racing it
// won, and the mom removed that path again at the job's end.
func TestTmpDirCannotBeSquatted(t *testing.T) {
	t.Parallel()
	const nobody = 65534
	sq := newSquatter(t, nobody, nobody)
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	m := c.AddMom("n1", testcluster.MomOptions{})
	base := filepath.Join(m.Home, "tmp") // the mom's $tmpdir, open to all (1777)

	// start runs a job that prints its TMPDIR (path, owner, mode), writes
	// a file there and waits for the test's word, squat having made the
	// old path first (its result undoes what goes on); it returns the
	// job's id, its TMPDIR, the output file and the word.
	start := func(t *testing.T, name string, squat func(old string) func()) (id, tmp, out string, release func()) {
		t.Helper()
		goFile := filepath.Join(t.TempDir(), "go")
		out = filepath.Join(t.TempDir(), "out")
		id = c.Submit("#!/bin/sh\necho \"tmpdir=$TMPDIR $(stat -c '%u %a' \"$TMPDIR\")\"\necho mine > \"$TMPDIR/mine\"\n"+
			"while [ ! -e "+goFile+" ]; do sleep 0.1; done\n", "-N", name, "-j", "oe", "-o", out)
		old := filepath.Join(base, "pbs."+id)
		var once sync.Once
		unsquat := squat(old)
		stopSquat := func() { once.Do(unsquat) }
		t.Cleanup(stopSquat) // also when the job does not start
		c.MustRun("qrun", id)
		var got []string
		testcluster.WaitFor(t, "the job to print its TMPDIR", 30*time.Second, func() (bool, string) {
			b, _ := os.ReadFile(out)
			if got = jobTmpDir.FindStringSubmatch(string(b)); got != nil {
				return true, ""
			}
			if st := attr(t, c, id, "job_state"); st != "R" && st != "Q" {
				t.Fatalf("the job did not start: state %s, comment %q", st, attr(t, c, id, "comment"))
			}
			return false, fmt.Sprintf("output %q", b)
		})
		stopSquat()
		tmp = got[1]
		if filepath.Dir(tmp) != base || !strings.HasPrefix(filepath.Base(tmp), "pbs."+id+".") {
			t.Errorf("TMPDIR %s, want a new name pbs.%s.<random> in $tmpdir %s", tmp, id, base)
		}
		if got[2] != "0" || got[3] != "700" {
			t.Errorf("TMPDIR %s of uid %s mode %s, want the owner's (0), 700", tmp, got[2], got[3])
		}
		return id, tmp, out, func() { os.WriteFile(goFile, nil, 0o644) }
	}
	// end lets the job end and checks its end: exit status 0, its TMPDIR
	// gone.
	end := func(t *testing.T, id, tmp string, release func()) {
		t.Helper()
		release()
		c.WaitJobState(id, "F", 30*time.Second)
		if got := attr(t, c, id, "Exit_status"); got != "0" {
			t.Errorf("Exit_status %s; comment %q", got, attr(t, c, id, "comment"))
		}
		testcluster.WaitFor(t, "the job's TMPDIR "+tmp+" to go", 10*time.Second, func() (bool, string) {
			_, err := os.Lstat(tmp)
			return os.IsNotExist(err), fmt.Sprint(err)
		})
	}

	t.Run("directory", func(t *testing.T) {
		var old string
		id, tmp, _, release := start(t, "squatdir", func(p string) func() {
			old = p
			stop := make(chan struct{})
			sq.do(func() { syscall.Mkdir(p, 0o755) })
			sq.race(p, stop)
			return func() { close(stop); sq.do(func() {}) }
		})
		end(t, id, tmp, release)
		var st syscall.Stat_t
		if err := syscall.Lstat(old, &st); err != nil || st.Uid != nobody || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			t.Errorf("nobody's directory %s: %v, uid %d mode %o; want it left as it was", old, err, st.Uid, st.Mode)
		}
		if _, err := os.Stat(filepath.Join(old, "mine")); err == nil {
			t.Errorf("the job wrote into nobody's directory %s", old)
		}
	})

	t.Run("link", func(t *testing.T) {
		target := filepath.Join(base, "nobodys") // elsewhere, and nobody's
		var old string
		id, tmp, _, release := start(t, "squatlink", func(p string) func() {
			old = p
			sq.do(func() {
				syscall.Mkdir(target, 0o755)
				syscall.Symlink(target, p)
			})
			return func() {}
		})
		end(t, id, tmp, release)
		if got, err := os.Readlink(old); err != nil || got != target {
			t.Errorf("nobody's link %s: %q %v; want it left as it was", old, got, err)
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(target, &st); err != nil || st.Uid != nobody || st.Mode&0o7777 != 0o755 || len(held(target)) != 0 {
			t.Errorf("the link's target %s: %v, uid %d mode %o holding %q; want it untouched", target, err, st.Uid, st.Mode&0o7777, held(target))
		}
	})

	t.Run("file, and a mom restart", func(t *testing.T) {
		var old string
		id, tmp, _, release := start(t, "squatfile", func(p string) func() {
			old = p
			sq.do(func() {
				if fd, err := syscall.Open(p, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644); err == nil {
					syscall.Write(fd, []byte("nobody's\n"))
					syscall.Close(fd)
				}
			})
			return func() {}
		})
		// A restarted mom knows the job's TMPDIR from its job file.
		ready := strings.Count(m.Log(), "mom ready")
		m.Kill(syscall.SIGKILL)
		m.WaitDown(10 * time.Second)
		m.Start()
		testcluster.WaitFor(t, "the restarted mom ready", 20*time.Second, func() (bool, string) {
			return strings.Count(m.Log(), "mom ready") > ready, "not yet"
		})
		end(t, id, tmp, release)
		if b, err := os.ReadFile(old); err != nil || string(b) != "nobody's\n" {
			t.Errorf("nobody's file %s: %q %v; want it left as it was", old, b, err)
		}
	})
}

// held lists what dir holds.
func held(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
