package server

import (
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// fakeScheduler records the commands of the cycles the server starts; a
// cycle stays open until release is called for it.
type fakeScheduler struct {
	mu     sync.Mutex
	cmds   []proto.SchedCmd
	hold   chan struct{} // a cycle waits on it when not nil
	cycles chan proto.SchedCmd
	l      net.Listener
}

func startFakeScheduler(t *testing.T, key []byte) *fakeScheduler {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeScheduler{l: l, cycles: make(chan proto.SchedCmd, 100)}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			c := proto.NewConn(nc, 0)
			_, err = proto.ServerHandshake(c, "sched", func(proto.Hello) ([]byte, error) { return key, nil })
			if err != nil {
				nc.Close()
				continue
			}
			h, body, err := c.Recv()
			if err != nil || h.Type != proto.MsgSchedCommand {
				nc.Close()
				continue
			}
			var cmd proto.SchedCommand
			proto.DecodeBody(body, &cmd)
			f.mu.Lock()
			f.cmds = append(f.cmds, cmd.Cmd)
			hold := f.hold
			f.mu.Unlock()
			f.cycles <- cmd.Cmd
			if hold != nil {
				<-hold
			}
			nc.Close()
		}
	}()
	return f
}

func (f *fakeScheduler) next(t *testing.T) proto.SchedCmd {
	t.Helper()
	select {
	case c := <-f.cycles:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no scheduling cycle")
	}
	return 0
}

func (f *fakeScheduler) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case c := <-f.cycles:
		t.Fatalf("unexpected cycle %s", c)
	case <-time.After(d):
	}
}

// Events that arrive during a cycle are kept and coalesced: one NEW cycle
// follows however many jobs were submitted meanwhile; nothing starts while
// scheduling is False, and setting it True (even again) starts a cycle.
func TestSchedulerEventsCoalesced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key, err := proto.LoadOrCreateKey(filepath.Join(dir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	f := startFakeScheduler(t, key)
	_, c := newTestServerAt(t, dir, func(cfg *Config) {
		cfg.KeyFile = filepath.Join(dir, "key")
		cfg.SchedAddr = f.l.Addr().String()
	})
	if got := f.next(t); got != proto.SchedFirst {
		t.Fatalf("first cycle %s", got)
	}
	hold := make(chan struct{})
	f.mu.Lock()
	f.hold = hold
	f.mu.Unlock()
	if _, err := submit(c); err != nil {
		t.Fatal(err)
	}
	if got := f.next(t); got != proto.SchedNew {
		t.Fatalf("cycle after a submission: %s", got)
	}
	// The cycle is held open: these events must wait, coalesced.
	for i := 0; i < 20; i++ {
		if _, err := submit(c); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := c.StatusServer(nil); true {
		if v, _ := st.Get("server_state"); v != "Scheduling" {
			t.Errorf("server_state during a cycle: %q", v)
		}
	}
	f.none(t, 300*time.Millisecond)
	f.mu.Lock()
	f.hold = nil
	f.mu.Unlock()
	close(hold)
	if got := f.next(t); got != proto.SchedNew {
		t.Fatalf("after the held cycle: %s", got)
	}
	f.none(t, 500*time.Millisecond)

	set := func(v string) {
		if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjServer, Attrs: []proto.Attr{{Name: "scheduling", Value: v}}}); err != nil {
			t.Fatal(err)
		}
	}
	set("False")
	submit(c)
	f.none(t, 500*time.Millisecond)
	set("True")
	got := []proto.SchedCmd{f.next(t), f.next(t)}
	if !(got[0] == proto.SchedNew && got[1] == proto.SchedCmdSet || got[0] == proto.SchedCmdSet && got[1] == proto.SchedNew) {
		t.Fatalf("after scheduling = True: %v, want the kept NEW and CMD", got)
	}
	set("True")
	if got := f.next(t); got != proto.SchedCmdSet {
		t.Fatalf("setting scheduling True again: %s", got)
	}
}
