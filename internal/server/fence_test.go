package server

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// Fencing across restarts and leaders: a lease granted under long
// settings is stored as the ceiling before it is granted, and a server
// started afterwards (a restart, or a new leader of a replicated group)
// requeues no job for its node's silence until that lease has lapsed,
// though the settings were lowered meanwhile.
func TestLeaseCeilingFencesTheNextServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	var mu sync.Mutex
	clock := time.Unix(1_800_000_000, 0)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	s1, c := newTestServerAt(t, dir, func(cfg *Config) { cfg.Now = now })
	mgr := func(c *proto.Client, name, value string) {
		t.Helper()
		if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjServer, Attrs: []proto.Attr{{Name: name, Value: value}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjNode, Name: "n1"}); err != nil {
		t.Fatal(err)
	}
	mgr(c, proto.AttrNodeCheckRate, "60")
	mgr(c, proto.AttrNodeFailRequeue, "600")
	mom := &caller{role: proto.RoleMom, name: "n1"}
	reply, err := s1.momStatus(mom, &proto.MomStatus{Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Lease != 630 {
		t.Fatalf("lease %d s, want 630", reply.Lease)
	}
	id := mustSubmit(t, c)
	startJobOn(t, s1, id, "n1/0")
	mgr(c, proto.AttrNodeCheckRate, "10")
	mgr(c, proto.AttrNodeFailRequeue, "10")
	c.Close()
	s1.Close()

	s2, c2 := newTestServerAt(t, dir, func(cfg *Config) { cfg.Now = now })
	// The node is silent: down after 10 s, its jobs requeued 10 s later
	// by the settings now, but not before the lease granted under the
	// old ones lapsed (630 s + 2 s for its shepherds).
	for _, at := range []time.Duration{15 * time.Second, 20 * time.Second, 200 * time.Second, 600 * time.Second} {
		advance(at - now().Sub(time.Unix(1_800_000_000, 0)))
		s2.checkNodes(now())
		if st := jobAttr(t, c2, id, proto.AttrJobState); st != "R" {
			t.Fatalf("job %s %v after the restart: state %s, want R (the lease granted before lapses at 632 s)", id, at, st)
		}
	}
	advance(40 * time.Second)
	s2.checkNodes(now())
	if st := jobAttr(t, c2, id, proto.AttrJobState); st != "Q" {
		t.Fatalf("job %s once every lease lapsed: state %s, want Q", id, st)
	}
}
