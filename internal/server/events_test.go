package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/events"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// subscribe opens an event stream on a connection of its own.
func subscribe(t *testing.T, dir string, req *proto.SubscribeRequest) *proto.EventStream {
	t.Helper()
	c, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(dir, "s.sock")})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Subscribe(req)
	if err != nil {
		c.Close()
		t.Fatalf("subscribe: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// next reads n events (as "id:state[:exit]") from st.
func nextEvents(t *testing.T, st *proto.EventStream, n int) ([]string, []uint64) {
	t.Helper()
	var got []string
	var seqs []uint64
	for len(got) < n {
		evs, err := st.Next()
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		for _, e := range evs {
			s := e.JobID + ":" + e.State
			if e.ExitStatus != nil {
				s += fmt.Sprintf(":%d", *e.ExitStatus)
			}
			got = append(got, s)
			seqs = append(seqs, e.Seq)
		}
	}
	return got, seqs
}

func testDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "srvt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Every committed change of a job's state reaches a subscriber once, in
// order, numbered without gaps; a hold, its release, a start, an end with
// its exit status, and a delete of a queued job.
func TestEventStreamCarriesChanges(t *testing.T) {
	t.Parallel()
	dir := testDir(t)
	s, c := newTestServerAt(t, dir, func(*Config) {})
	st := subscribe(t, dir, &proto.SubscribeRequest{})
	a := mustSubmit(t, c)
	if err := c.HoldJob(a, "u"); err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseJob(a, "u"); err != nil {
		t.Fatal(err)
	}
	runSub(t, s, a)
	endJob(t, s, a, 3)
	b := mustSubmit(t, c)
	if err := c.DeleteJob(b, proto.DeleteOptions{KillDelay: proto.NoKillDelay}); err != nil {
		t.Fatal(err)
	}
	got, seqs := nextEvents(t, st, 7)
	want := []string{a + ":Q", a + ":H", a + ":Q", a + ":R", a + ":F:3", b + ":Q", b + ":F:271"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range seqs {
		if seqs[i] != st.Reply.Last+uint64(i)+1 {
			t.Fatalf("sequence numbers %v after %d", seqs, st.Reply.Last)
		}
	}
}

// A subscriber resumes after a restart of the server from the last change
// it saw: the changes it missed come from the store, none twice, and the
// numbering goes on.
func TestEventStreamResumesAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := testDir(t)
	s, c := newTestServerAt(t, dir, func(*Config) {})
	st := subscribe(t, dir, &proto.SubscribeRequest{})
	a := mustSubmit(t, c)
	_, seqs := nextEvents(t, st, 1)
	seen := seqs[0]
	b := mustSubmit(t, c) // missed by the subscriber
	st.Close()
	c.Close()
	s.Close()

	_, c = newTestServerAt(t, dir, func(*Config) {})
	st = subscribe(t, dir, &proto.SubscribeRequest{Resume: true, After: seen})
	d := mustSubmit(t, c)
	got, seqs := nextEvents(t, st, 2)
	if strings.Join(got, " ") != b+":Q "+d+":Q" || seqs[0] != seen+1 || seqs[1] != seen+2 {
		t.Fatalf("after the restart: %v %v, want %s then %s numbered from %d (job %s was seen)", got, seqs, b, d, seen+1, a)
	}
	// From the start: everything kept.
	all := subscribe(t, dir, &proto.SubscribeRequest{Resume: true})
	if got, _ := nextEvents(t, all, 3); strings.Join(got, " ") != a+":Q "+b+":Q "+d+":Q" {
		t.Fatalf("resume from the start: %v", got)
	}
	// Ahead of the server: refused, so the client reads the state again.
	cl, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(dir, "s.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Subscribe(&proto.SubscribeRequest{Resume: true, After: seen + 100}); proto.CodeOf(err) != proto.PBSE_EVENTGAP {
		t.Fatalf("resume ahead of the server: %v", err)
	}
	// The refusal leaves the connection usable.
	if _, err := cl.WhoAmI(); err != nil {
		t.Fatalf("after a refused subscription: %v", err)
	}
}

// A change whose commit fails is no event, and its number is not lost.
func TestEventStreamSkipsFailedCommits(t *testing.T) {
	t.Parallel()
	dir := testDir(t)
	var failing atomic.Bool
	_, c := newTestServerAt(t, dir, func(cfg *Config) {
		cfg.Store = store.Options{BeforeCommit: func() error {
			if failing.Load() {
				return errors.New("disk full")
			}
			return nil
		}}
	})
	st := subscribe(t, dir, &proto.SubscribeRequest{})
	a := mustSubmit(t, c)
	failing.Store(true)
	if _, err := submit(c); proto.CodeOf(err) != proto.PBSE_SAVE_ERR {
		t.Fatalf("submit on a failing store: %v", err)
	}
	failing.Store(false)
	b := mustSubmit(t, c)
	got, seqs := nextEvents(t, st, 2)
	if strings.Join(got, " ") != a+":Q "+b+":Q" || seqs[1] != seqs[0]+1 {
		t.Fatalf("events %v %v", got, seqs)
	}
}

// What a user who is no manager or operator may subscribe to, and see.
func TestEventRights(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	alice := &caller{user: "alice", uid: 1000, host: "host", role: proto.RoleClient}
	root := &caller{user: "root", uid: 0, host: "host", role: proto.RoleClient}
	bobs := &events.Event{JobID: "1.srv", Owner: "bob"}
	hers := &events.Event{JobID: "2.srv", Owner: "alice"}
	setOthers := func(v string) {
		t.Helper()
		if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjServer, Attrs: []proto.Attr{{Name: proto.AttrQueryOtherJobs, Value: v}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		who       *caller
		others    string
		req       proto.SubscribeRequest
		wantOwner string
		refused   bool
		seesBobs  bool
	}{
		{"user, others hidden", alice, "false", proto.SubscribeRequest{}, "alice", false, false},
		{"user asks for another's jobs, others hidden", alice, "false", proto.SubscribeRequest{Owner: "bob"}, "", true, false},
		{"user, job ids, others hidden", alice, "false", proto.SubscribeRequest{JobIDs: []string{"1"}}, "alice", false, false},
		{"user, others shown", alice, "true", proto.SubscribeRequest{}, "", false, true},
		{"manager, others hidden", root, "false", proto.SubscribeRequest{Owner: "bob"}, "bob", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setOthers(tc.others)
			f, r, err := s.eventFilter(tc.who, &tc.req)
			if tc.refused {
				if proto.CodeOf(err) != proto.PBSE_PERM {
					t.Fatalf("want PBSE_PERM, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Owner != tc.wantOwner {
				t.Errorf("filter owner %q, want %q", f.Owner, tc.wantOwner)
			}
			if got := s.maySee(r, bobs) && (f.Owner == "" || f.Owner == "bob"); got != tc.seesBobs {
				t.Errorf("sees bob's change: %v", got)
			}
			if !s.maySee(r, hers) && tc.who == alice {
				t.Error("does not see her own change")
			}
		})
	}
	// query_other_jobs set false while a user's unnarrowed stream runs:
	// others' changes stop at once.
	setOthers("true")
	_, r, err := s.eventFilter(alice, &proto.SubscribeRequest{})
	if err != nil || r.own {
		t.Fatalf("%+v %v", r, err)
	}
	setOthers("false")
	if s.maySee(r, bobs) {
		t.Error("bob's change shown after query_other_jobs was set false")
	}
	if got := s.canonicalJobID("12[3]"); got != "12[3].srv" {
		t.Errorf("canonical subjob id %q", got)
	}
	if got := s.canonicalJobID("12[1-5]"); got != "12[].srv" {
		t.Errorf("canonical range id %q", got)
	}
	if got := s.canonicalJobID("12[].other"); got != "12[].srv" {
		t.Errorf("canonical array id %q", got)
	}
}

// A subscriber that reads nothing is cut off with PBSE_TOOSLOW once it is
// its buffer behind, and submissions meanwhile stay quick: the commit
// path never waits for it.
func TestSlowSubscriberCutOff(t *testing.T) {
	t.Parallel()
	dir := testDir(t)
	s, c := newTestServerAt(t, dir, func(*Config) {})
	slow := subscribe(t, dir, &proto.SubscribeRequest{Buffer: 10})
	var worst atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		cl, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(dir, "s.sock")})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 250; i++ {
				start := time.Now()
				if _, err := submit(cl); err != nil {
					t.Error(err)
					return
				}
				if d := int64(time.Since(start)); d > worst.Load() {
					worst.Store(d)
				}
			}
		}()
	}
	wg.Wait()
	if w := time.Duration(worst.Load()); w > 2*time.Second {
		t.Errorf("the slowest submission took %s with a stuck subscriber", w)
	}
	ok, _ := testcluster.Poll(10*time.Second, func() (bool, string) { return s.ev.hub.Subscribers() == 0, "" })
	if !ok {
		t.Fatalf("the stuck subscriber was not cut off after 1000 changes (%d subscribers)", s.ev.hub.Subscribers())
	}
	var err error
	n := 0
	for err == nil {
		var evs []proto.JobEvent
		evs, err = slow.Next()
		n += len(evs)
	}
	if proto.CodeOf(err) != proto.PBSE_TOOSLOW || !strings.Contains(err.Error(), "behind") {
		t.Fatalf("the stream of the stuck subscriber ended with %v after %d events", err, n)
	}
	// The server goes on.
	mustSubmit(t, c)
}
