package server

import (
	"os"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// startJob and endJob move a job as a mom's start and obit would, through
// the same transitions and hooks, without a mom.
func startJob(t *testing.T, s *Server, id string) { startJobOn(t, s, id, "") }

// startJobOn is startJob with the job's exec_host ("" for none).
func startJobOn(t *testing.T, s *Server, id, execHost string) {
	t.Helper()
	err := s.commit.Do(func(b *store.Batch) error {
		j, err := s.jobs.Lookup(id)
		if err != nil {
			return err
		}
		now := s.nowUnix()
		var h model.Hooks
		s.jobs.Update(j, func() {
			h = j.Start(model.SubRunning, now)
			if execHost != "" {
				j.Alloc = resc.ParseAlloc(execHost, "")
			}
		})
		b.PutJob(j)
		s.hooks(b, j, h, now)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func endJob(t *testing.T, s *Server, id string, exit int) {
	t.Helper()
	err := s.commit.Do(func(b *store.Batch) error {
		j, err := s.jobs.Lookup(id)
		if err != nil {
			return err
		}
		s.finish(b, j, model.SubFinished, exit, "", s.nowUnix())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ran runs a job to its end with the exit status.
func ran(t *testing.T, s *Server, id string, exit int) {
	t.Helper()
	startJob(t, s, id)
	endJob(t, s, id, exit)
}

func jobAttr(t *testing.T, c *proto.Client, id, name string) string {
	t.Helper()
	jobs, _, err := c.StatusJobs(&proto.StatusRequest{IDs: []string{id}, History: true})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("status %s: %v %v", id, jobs, err)
	}
	v, _ := jobs[0].Get(name)
	return v
}

func depend(v string) proto.Attr { return proto.Attr{Name: proto.AttrDepend, Value: v} }

func mustSubmit(t *testing.T, c *proto.Client, attrs ...proto.Attr) string {
	t.Helper()
	id, err := submit(c, attrs...)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Each after form, against a parent that ends well and one that fails:
// met releases the job (Q), never deletes it with a comment.
func TestDependAfterForms(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	for _, tc := range []struct {
		typ       string
		exit      int
		wantState string
	}{
		{"afterok", 0, "Q"}, {"afterok", 1, "F"},
		{"afternotok", 1, "Q"}, {"afternotok", 0, "F"},
		{"afterany", 0, "Q"}, {"afterany", 3, "Q"},
		{"after", 0, "Q"},
	} {
		parent := mustSubmit(t, c)
		child := mustSubmit(t, c, depend(tc.typ+":"+parent))
		if st, h := jobAttr(t, c, child, "job_state"), jobAttr(t, c, child, "Hold_Types"); st != "H" || h != "s" {
			t.Fatalf("%s: child %s Hold_Types %s, want H s", tc.typ, st, h)
		}
		if sub := jobAttr(t, c, child, "substate"); sub != "22" {
			t.Errorf("%s: substate %s, want 22", tc.typ, sub)
		}
		if d := jobAttr(t, c, child, "depend"); d != tc.typ+":"+parent+"@srv" {
			t.Errorf("depend = %q", d)
		}
		startJob(t, s, parent)
		if tc.typ == "after" {
			if st := jobAttr(t, c, child, "job_state"); st != "Q" {
				t.Fatalf("after: the parent began, child %s", st)
			}
			endJob(t, s, parent, tc.exit)
			continue
		}
		if st := jobAttr(t, c, child, "job_state"); st != "H" {
			t.Fatalf("%s: parent running, child %s", tc.typ, st)
		}
		endJob(t, s, parent, tc.exit)
		if st := jobAttr(t, c, child, "job_state"); st != tc.wantState {
			t.Fatalf("%s, parent exit %d: child %s, want %s", tc.typ, tc.exit, st, tc.wantState)
		}
		if tc.wantState == "Q" && jobAttr(t, c, child, "etime") == "" {
			t.Errorf("%s: released child has no etime", tc.typ)
		}
		if tc.wantState == "F" {
			if cm := jobAttr(t, c, child, "comment"); !strings.Contains(cm, "can never be met") || !strings.Contains(cm, parent) {
				t.Errorf("%s: comment %q", tc.typ, cm)
			}
			if ex := jobAttr(t, c, child, "Exit_status"); ex != "271" {
				t.Errorf("%s: deleted child Exit_status %s", tc.typ, ex)
			}
		}
		c.DeleteJob(child, proto.DeleteOptions{KillDelay: proto.NoKillDelay})
	}
	// Deletion is recorded in the accounting log (an A record, OpenPBS's
	// for a job the server deleted, with why).
	acct, _ := os.ReadDir(s.cfg.AccountingDir)
	found := false
	for _, e := range acct {
		data, _ := os.ReadFile(s.cfg.AccountingDir + "/" + e.Name())
		if strings.Contains(string(data), ";A;") && strings.Contains(string(data), "can never be met") {
			found = true
		}
	}
	if !found {
		t.Error("no A accounting record for a job whose dependency can never be met")
	}
}

// A dependency on a job that already ended counts by how it ended; an
// unknown id is refused at submission.
func TestDependOnFinishedAndUnknown(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	good := mustSubmit(t, c)
	ran(t, s, good, 0)
	bad := mustSubmit(t, c)
	ran(t, s, bad, 2)
	neverRan := mustSubmit(t, c)
	if err := c.DeleteJob(neverRan, proto.DeleteOptions{KillDelay: proto.NoKillDelay}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dep, want string }{
		{"afterok:" + good, "Q"}, {"afterok:" + bad, "F"},
		{"afternotok:" + bad, "Q"}, {"afternotok:" + good, "F"},
		{"afterany:" + bad, "Q"}, {"after:" + good, "Q"}, {"after:" + neverRan, "F"},
		{"afterok:" + good + ":" + bad, "F"},
		{"afternotok:" + neverRan, "Q"}, // qdel counts as a failure
	} {
		id := mustSubmit(t, c, depend(tc.dep))
		if st := jobAttr(t, c, id, "job_state"); st != tc.want {
			t.Errorf("depend=%s: %s, want %s (comment %q)", tc.dep, st, tc.want, jobAttr(t, c, id, "comment"))
		}
	}
	if _, err := submit(c, depend("afterok:999")); proto.CodeOf(err) != proto.PBSE_UNKJOBID || !strings.Contains(err.Error(), "999.srv") {
		t.Errorf("unknown parent: %v", err)
	}
	if _, err := submit(c, depend("beforeokarray:1[]")); proto.CodeOf(err) != proto.PBSE_NOSUP || !strings.Contains(err.Error(), "beforeokarray") {
		t.Errorf("before form on an array: %v", err)
	}
	if _, err := submit(c, depend("before:"+good)); proto.CodeOf(err) != proto.PBSE_BADDEPEND {
		t.Errorf("before on a finished job: %v", err)
	}
}

// Deleting a parent releases afternotok and afterany dependants and
// deletes afterok ones, down the chain.
func TestDependParentDeleted(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	parent := mustSubmit(t, c)
	ok := mustSubmit(t, c, depend("afterok:"+parent))
	grandchild := mustSubmit(t, c, depend("afterok:"+ok))
	any := mustSubmit(t, c, depend("afterany:"+parent))
	notok := mustSubmit(t, c, depend("afternotok:"+parent))
	if err := c.DeleteJob(parent, proto.DeleteOptions{KillDelay: proto.NoKillDelay}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{ok: "F", grandchild: "F", any: "Q", notok: "Q"} {
		if st := jobAttr(t, c, id, "job_state"); st != want {
			t.Errorf("%s: %s, want %s", id, st, want)
		}
	}
}

// before forms hold the named job until this one ends; on:N waits for N
// of them.
func TestDependBeforeAndOn(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	last := mustSubmit(t, c, depend("on:2"))
	if st := jobAttr(t, c, last, "job_state"); st != "H" {
		t.Fatalf("on:2 alone: %s", st)
	}
	a := mustSubmit(t, c, depend("beforeok:"+last))
	b := mustSubmit(t, c, depend("beforeany:"+last))
	if d := jobAttr(t, c, last, "depend"); d != "on:0,afterok:"+a+"@srv,afterany:"+b+"@srv" {
		t.Errorf("registered: depend = %q", d)
	}
	if d := jobAttr(t, c, a, "depend"); d != "beforeok:"+last+"@srv" {
		t.Errorf("before side: depend = %q", d)
	}
	if st := jobAttr(t, c, a, "job_state"); st != "Q" {
		t.Errorf("a before job is not held itself: %s", st)
	}
	ran(t, s, a, 0)
	if st := jobAttr(t, c, last, "job_state"); st != "H" {
		t.Fatalf("one of two ended: %s", st)
	}
	ran(t, s, b, 1)
	if st := jobAttr(t, c, last, "job_state"); st != "Q" {
		t.Fatalf("both ended: %s", st)
	}
	// before on a job without on: holds it all the same.
	plain := mustSubmit(t, c)
	first := mustSubmit(t, c, depend("before:"+plain))
	if st := jobAttr(t, c, plain, "job_state"); st != "H" {
		t.Fatalf("before:%s: %s", plain, st)
	}
	startJob(t, s, first)
	if st := jobAttr(t, c, plain, "job_state"); st != "Q" {
		t.Fatalf("before: first began, %s", st)
	}
}

// qalter -W depend replaces the dependencies; a manager's qrls -h s lifts
// the wait; an unrelated system hold stays when a dependency is met.
func TestDependAlterAndRelease(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	parent := mustSubmit(t, c)
	child := mustSubmit(t, c)
	if err := c.AlterJob(child, []proto.Attr{depend("afterok:" + parent)}); err != nil {
		t.Fatal(err)
	}
	if st := jobAttr(t, c, child, "job_state"); st != "H" {
		t.Fatalf("qalter depend: %s", st)
	}
	if err := c.AlterJob(child, []proto.Attr{depend("afterok:12345")}); proto.CodeOf(err) != proto.PBSE_UNKJOBID {
		t.Fatalf("qalter to an unknown job: %v", err)
	}
	if err := c.AlterJob(child, []proto.Attr{depend("afterok:" + child)}); proto.CodeOf(err) != proto.PBSE_BADDEPEND {
		t.Fatalf("qalter to the job itself: %v", err)
	}
	if err := c.AlterJob(child, []proto.Attr{depend("before:" + parent)}); proto.CodeOf(err) != proto.PBSE_NOSUP {
		t.Fatalf("qalter before: %v", err)
	}
	if err := c.AlterJob(child, []proto.Attr{{Name: proto.AttrDepend, Op: proto.OpUnset}}); err != nil {
		t.Fatal(err)
	}
	if st := jobAttr(t, c, child, "job_state"); st != "Q" {
		t.Fatalf("depend unset: %s", st)
	}
	// A system hold and a dependency: the dependency met leaves the hold.
	if err := c.AlterJob(child, []proto.Attr{depend("afterany:" + parent)}); err != nil {
		t.Fatal(err)
	}
	if err := c.HoldJob(child, "s"); err != nil {
		t.Fatal(err)
	}
	ran(t, s, parent, 0)
	if st, sub := jobAttr(t, c, child, "job_state"), jobAttr(t, c, child, "substate"); st != "H" || sub != "20" {
		t.Fatalf("system hold after the dependency was met: %s %s", st, sub)
	}
	if err := c.ReleaseJob(child, "s"); err != nil {
		t.Fatal(err)
	}
	if st := jobAttr(t, c, child, "job_state"); st != "Q" {
		t.Fatalf("released: %s", st)
	}
	// qrls -h s lifts a wait for dependencies.
	p2 := mustSubmit(t, c)
	c2 := mustSubmit(t, c, depend("afterok:"+p2))
	if err := c.ReleaseJob(c2, "s"); err != nil {
		t.Fatal(err)
	}
	if st := jobAttr(t, c, c2, "job_state"); st != "Q" {
		t.Fatalf("qrls -h s of a dependency hold: %s", st)
	}
}

// Dependencies and the index of dependants survive a restart.
func TestDependSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "srvt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s, c := newTestServerAt(t, dir, func(*Config) {})
	parent := mustSubmit(t, c)
	child := mustSubmit(t, c, depend("afterok:"+parent))
	last := mustSubmit(t, c, depend("on:1"))
	before := mustSubmit(t, c, depend("beforeany:"+last))
	c.Close()
	s.Close()
	s, c = newTestServerAt(t, dir, func(*Config) {})
	if st, d := jobAttr(t, c, child, "job_state"), jobAttr(t, c, child, "depend"); st != "H" || d != "afterok:"+parent+"@srv" {
		t.Fatalf("after restart: %s %q", st, d)
	}
	ran(t, s, parent, 0)
	if st := jobAttr(t, c, child, "job_state"); st != "Q" {
		t.Fatalf("parent ended after the restart: child %s", st)
	}
	ran(t, s, before, 9)
	if st := jobAttr(t, c, last, "job_state"); st != "Q" {
		t.Fatalf("before job ended after the restart: %s", st)
	}
}
