package stagecopy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/testcluster"
)

func currentAccount(t *testing.T) *asuser.Account {
	t.Helper()
	usr, err := asuser.Current()
	if err != nil {
		t.Fatal(err)
	}
	return usr
}

// writeRecord leaves the record of a partial file as a copy that died
// would have.
func writeRecord(t *testing.T, dir, hex string, rec partialRecord) {
	t.Helper()
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, hex+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustExist(t *testing.T, path string, want bool) {
	t.Helper()
	_, err := os.Lstat(path)
	if got := err == nil; got != want {
		t.Errorf("%s exists: %v, want %v", path, got, want)
	}
}

// A starting mom removes the partial files of the copies a previous mom
// (or a shepherd now gone) left, by the paths their records give, and the
// records. It leaves the file of a copy still going (its record is
// locked), anything a record names that is not a partial file's name, and
// a symlink in the place of one; each record it has settled goes.
func TestRecoverPartialsRemovesOnlyWhatItCreated(t *testing.T) {
	partials := t.TempDir()
	usr := currentAccount(t)
	dir := t.TempDir()
	rec := func(path string) partialRecord { return partialRecord{Path: path, User: usr.Name, UID: usr.UID} }

	stale := partialName(filepath.Join(dir, "out.dat"), "0123456789ab")
	os.WriteFile(stale, []byte("half a file"), 0o600)
	writeRecord(t, partials, "0123456789ab", rec(stale))

	live := partialName(filepath.Join(dir, "busy.dat"), "00000000000a")
	end, err := beginPartial(partials, usr, live, "00000000000a")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(live, []byte("being written"), 0o600)

	precious := filepath.Join(dir, "precious")
	os.WriteFile(precious, []byte("the user's"), 0o600)
	writeRecord(t, partials, "aaaaaaaaaaaa", rec(precious))

	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("the user's too"), 0o600)
	link := partialName(filepath.Join(dir, "l.dat"), "bbbbbbbbbbbb")
	os.Symlink(target, link)
	writeRecord(t, partials, "bbbbbbbbbbbb", rec(link))

	writeRecord(t, partials, "cccccccccccc", rec(partialName(filepath.Join(dir, "done.dat"), "cccccccccccc")))

	RecoverPartials(partials, hclog.NewNullLogger())
	mustExist(t, stale, false)
	mustExist(t, live, true)
	mustExist(t, precious, true)
	mustExist(t, link, true)
	mustExist(t, target, true)
	ents, _ := os.ReadDir(partials)
	if len(ents) != 1 || ents[0].Name() != "00000000000a.json" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("records left %v, want only the live copy's", names)
	}
	end()
	mustExist(t, filepath.Join(partials, "00000000000a.json"), false)
}

// A local copy writes through a recorded partial file and leaves neither
// it nor its record; a FIFO, a directory or a device as a source is
// refused at once with its type, never waited on.
func TestCopyLocalRefusesWhatIsNotARegularFile(t *testing.T) {
	partials := t.TempDir()
	usr := currentAccount(t)
	dir := t.TempDir()
	st := &Stager{Cfg: Config{Partials: partials}, Usr: usr, Dir: dir}
	src := filepath.Join(dir, "src")
	os.WriteFile(src, []byte("data\n"), 0o640)
	if err := st.copyLocal(src, filepath.Join(dir, "dst")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "dst")); string(got) != "data\n" {
		t.Errorf("copied %q", got)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for src, kind := range map[string]string{fifo: "fifo", dir: "directory", "/dev/null": "character device"} {
		done := make(chan error, 1)
		go func() { done <- st.copyLocal(src, filepath.Join(dir, "out")) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file: "+kind) || !strings.Contains(err.Error(), src) {
				t.Errorf("copy of %s: %v; want it refused as a %s", src, err, kind)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the copy of %s (a %s) is still waiting", src, kind)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), partialMark) || e.Name() == "out" {
			t.Errorf("left %s", e.Name())
		}
	}
	if ents, _ := os.ReadDir(partials); len(ents) != 0 {
		t.Errorf("records left: %d", len(ents))
	}
}

// A read that the kernel does not answer fails the copy after the stall,
// and at the next check once cancel says so, instead of blocking its
// caller; the file is unusable afterwards.
func TestBoundedFileGivesUpOnAStuckRead(t *testing.T) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	w := os.NewFile(uintptr(p[1]), "w")
	defer w.Close() // releases the reads given up on
	r := os.NewFile(uintptr(p[0]), "r")
	defer r.Close()

	b := newBoundedFile(r, 300*time.Millisecond, nil)
	start := time.Now()
	if _, err := b.Read(make([]byte, 10)); !errors.Is(err, errStalled) {
		t.Fatalf("stuck read: %v, want errStalled", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("gave up after %v", d)
	}
	if _, err := b.Read(make([]byte, 10)); !errors.Is(err, errStalled) {
		t.Errorf("read after one given up on: %v", err)
	}

	cancel, del := deleteSwitch()
	b = newBoundedFile(r, time.Hour, cancel)
	done := make(chan error, 1)
	go func() { _, err := b.Read(make([]byte, 10)); done <- err }()
	time.AfterFunc(200*time.Millisecond, del)
	waitDeleted(t, done, "a read")
}

// errDeleted stands for the shepherd's reason to stop a copy.
var errDeleted = errors.New("job deleted")

// deleteSwitch is a copy's cancel that says errDeleted once del is
// called.
func deleteSwitch() (cancel func() error, del func()) {
	var deleted atomic.Bool
	return func() error {
		if deleted.Load() {
			return errDeleted
		}
		return nil
	}, func() { deleted.Store(true) }
}

// waitDeleted waits for what stops when its copy is deleted to say so.
func waitDeleted(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, errDeleted) {
			t.Errorf("%s of a deleted job: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s went on after its copy had to stop", what)
	}
}

func FuzzParsePartialRecord(f *testing.F) {
	good, _ := json.Marshal(partialRecord{Path: "/home/u/.out.dat.pbs-stage-0123456789ab", User: "u", UID: 1000})
	f.Add("0123456789ab.json", good)
	f.Add("0123456789ab.json", []byte(`{"path":"/etc/passwd","user":"root","uid":0}`))
	f.Add("0123456789ab.json", []byte(`{"path":"/home/u/../../etc/.x.pbs-stage-0123456789ab","user":"u"}`))
	f.Add("x.json", []byte(`{}`))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		rec, err := parsePartialRecord(name, data)
		if err != nil {
			return
		}
		hex := strings.TrimSuffix(name, ".json")
		base := filepath.Base(rec.Path)
		if !filepath.IsAbs(rec.Path) || filepath.Clean(rec.Path) != rec.Path || rec.User == "" ||
			!strings.HasPrefix(base, ".") || !strings.HasSuffix(base, partialMark+hex) || len(hex) != partialHexLen {
			t.Fatalf("accepted %q: %+v", name, rec)
		}
	})
}

// A copy through scp that must stop (the job was deleted) kills scp and
// whatever it started, its whole session, and returns at once.
func TestScpStopsWithItsCopy(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	fake := filepath.Join(dir, "scp")
	os.WriteFile(fake, []byte("#!/bin/sh\nsleep 60 &\necho $! > "+pidFile+"\nwait\n"), 0o755)
	cancel, del := deleteSwitch()
	st := &Stager{Cfg: Config{Rcp: fake}, Usr: currentAccount(t), Cancel: cancel}
	done := make(chan error, 1)
	go func() { done <- st.scp("h:/in", filepath.Join(dir, "in")) }()
	testcluster.WaitFor(t, "the fake scp started", 10*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(pidFile)
		return strings.HasSuffix(string(b), "\n"), fmt.Sprintf("pid file %q", b)
	})
	del()
	waitDeleted(t, done, "scp")
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if gone, _ := testcluster.Poll(5*time.Second, func() (bool, string) { return syscall.Kill(pid, 0) != nil, "" }); !gone {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("scp's child %d outlived the copy", pid)
	}
}
