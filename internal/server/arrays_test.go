package server

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

func arrayAttr(v string) proto.Attr { return proto.Attr{Name: proto.AttrArrayIndices, Value: v} }

// runSub starts what id names (a job, a subjob, an array's next subjob) as
// a run would, without a mom, and returns the started job's id.
func runSub(t *testing.T, s *Server, id string) string {
	t.Helper()
	var started string
	err := s.commit.Do(func(b *store.Batch) error {
		now := s.nowUnix()
		j, parent, err := s.runnable(id, now)
		if err != nil {
			return err
		}
		s.recordStart(b, j, parent, resc.ParseAlloc("host/0", "(host:ncpus=1)"), false, "", now)
		started = j.ID
		return nil
	})
	if err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	return started
}

// states lists qstat -t: id -> state letter, and the order of the ids.
func states(t *testing.T, c *proto.Client, history bool, ids ...string) (map[string]string, []string) {
	t.Helper()
	jobs, errs, err := c.StatusJobs(&proto.StatusRequest{IDs: ids, History: history, Subjobs: true})
	if err != nil || len(errs) > 0 {
		t.Fatalf("status: %v %v", errs, err)
	}
	out := map[string]string{}
	var order []string
	for _, j := range jobs {
		v, _ := j.Get(proto.AttrJobState)
		out[j.Name] = v
		order = append(order, j.Name)
	}
	return out, order
}

func wantStates(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for id, st := range want {
		if got[id] != st {
			t.Errorf("%s is %q, want %q (all: %v)", id, got[id], st, got)
		}
	}
}

// TestArrayLifecycle walks an array through starts, ends, a hold of one
// subjob, deletion of a range and of the rest, across a server restart,
// checking what qstat shows at each step and the array's exit status.
func TestArrayLifecycle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, c := newTestServerAt(t, dir, func(*Config) {})
	mustSubmit(t, c) // job 0: the array is 1
	id, err := submit(c, arrayAttr("1-5"), proto.Attr{Name: proto.AttrJobName, Value: "arr"})
	if err != nil {
		t.Fatal(err)
	}
	if id != "1[].srv" {
		t.Fatalf("array id %q", id)
	}
	if got := jobAttr(t, c, id, proto.AttrOutputPath); !strings.HasSuffix(got, "/arr.o1.^array_index^") {
		t.Errorf("parent Output_Path %q", got)
	}
	st, order := states(t, c, false, id)
	if strings.Join(order, " ") != "1[].srv 1[1].srv 1[2].srv 1[3].srv 1[4].srv 1[5].srv" {
		t.Fatalf("qstat -t order: %v", order)
	}
	wantStates(t, st, map[string]string{"1[].srv": "Q", "1[3].srv": "Q"})
	if got := jobAttr(t, c, "1[4].srv", proto.AttrOutputPath); !strings.HasSuffix(got, "/arr.o1.4") {
		t.Errorf("subjob Output_Path %q", got)
	}
	// Without -t only the parent is listed.
	if jobs, _, _ := c.StatusJobs(&proto.StatusRequest{IDs: []string{id}}); len(jobs) != 1 || jobs[0].Name != "1[].srv" {
		t.Fatalf("qstat without -t: %v", jobs)
	}

	if got := runSub(t, s, "1[]"); got != "1[1].srv" {
		t.Fatalf("running the array started %s, want its first subjob", got)
	}
	runSub(t, s, "1[2].srv")
	endJob(t, s, "1[1].srv", 0)
	st, _ = states(t, c, false)
	wantStates(t, st, map[string]string{"1[].srv": "B", "1[1].srv": "X", "1[2].srv": "R", "1[3].srv": "Q"})
	if got := jobAttr(t, c, id, proto.AttrArrayRemaining); got != "3-5" {
		t.Errorf("array_indices_remaining %q", got)
	}
	if got := jobAttr(t, c, id, proto.AttrArrayStateCount); got != "Queued:3 Running:1 Exiting:0 Expired:1 " {
		t.Errorf("array_state_count %q", got)
	}
	if got := jobAttr(t, c, "1[1].srv", proto.AttrExitStatus); got != "0" {
		t.Errorf("finished subjob Exit_status %q", got)
	}

	if err := c.HoldJob("1[3]", "u"); err != nil {
		t.Fatalf("qhold of a subjob: %v", err)
	}
	if err := c.DeleteJob("1[4-5].srv", proto.DeleteOptions{KillDelay: proto.NoKillDelay}); err != nil {
		t.Fatalf("qdel of a range: %v", err)
	}
	st, _ = states(t, c, false)
	wantStates(t, st, map[string]string{"1[3].srv": "H", "1[4].srv": "X", "1[5].srv": "X", "1[2].srv": "R"})
	if got := jobAttr(t, c, id, proto.AttrArrayRemaining); got != "3" {
		t.Errorf("array_indices_remaining after qdel %q", got)
	}

	// A restart rebuilds the array from its records.
	s.Close()
	s, c = newTestServerAt(t, dir, func(*Config) {})
	st, _ = states(t, c, false)
	wantStates(t, st, map[string]string{"1[].srv": "B", "1[1].srv": "X", "1[2].srv": "R", "1[3].srv": "H", "1[4].srv": "X", "1[5].srv": "X"})
	if got := jobAttr(t, c, id, proto.AttrArrayStateCount); got != "Queued:1 Running:1 Exiting:0 Expired:3 " {
		t.Errorf("array_state_count after a restart %q", got)
	}

	// Deleting the array deletes the held subjob now; the running one ends
	// when its mom says so, and the array with it.
	if err := c.DeleteJob(id, proto.DeleteOptions{KillDelay: proto.NoKillDelay}); err == nil {
		// There is no mom to kill 1[2]: the request says so, the rest is done.
		t.Log("qdel of the array: no error")
	}
	st, _ = states(t, c, false)
	wantStates(t, st, map[string]string{"1[].srv": "B", "1[3].srv": "X", "1[2].srv": "R"})
	endJob(t, s, "1[2].srv", 0)
	if got := jobAttr(t, c, id, proto.AttrJobState); got != "F" {
		t.Fatalf("array after its last subjob: %s", got)
	}
	if got := jobAttr(t, c, id, proto.AttrExitStatus); got != "0" {
		t.Errorf("array Exit_status %q: subjobs that ran exited 0, the others were deleted", got)
	}
	if _, errs, _ := c.StatusJobs(&proto.StatusRequest{IDs: []string{"1[2]"}}); len(errs) != 1 || errs[0].Code != proto.PBSE_HISTJOBID {
		t.Errorf("subjob of a finished array without -x: %v", errs)
	}
	st, _ = states(t, c, true, id)
	wantStates(t, st, map[string]string{"1[].srv": "F", "1[2].srv": "X", "1[3].srv": "X"})
}

// TestArrayExitAndDependants: an array with a failing subjob ends with
// Exit_status 1; afterok on it deletes the dependant, afternotok releases
// its own, and a job depending on an array waits for the whole array.
func TestArrayExitAndDependants(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	mustSubmit(t, c)
	mustSubmit(t, c) // jobs 0 and 1: the array is 2
	id := mustSubmit(t, c, arrayAttr("0-2:2"))
	ok := mustSubmit(t, c, depend("afterok:"+id))
	notok := mustSubmit(t, c, depend("afternotokarray:"+id))
	started := mustSubmit(t, c, depend("after:"+id))
	if st := jobAttr(t, c, started, "job_state"); st != "H" {
		t.Fatalf("after: on a queued array: %s", st)
	}
	runSub(t, s, "2[0]")
	if st := jobAttr(t, c, started, "job_state"); st != "Q" {
		t.Errorf("after: once a subjob started: %s", st)
	}
	endJob(t, s, "2[0]", 0)
	if st := jobAttr(t, c, ok, "job_state"); st != "H" {
		t.Errorf("afterok while a subjob waits: %s", st)
	}
	runSub(t, s, "2[2]")
	endJob(t, s, "2[2]", 3)
	if got := jobAttr(t, c, id, proto.AttrExitStatus); got != "1" {
		t.Errorf("array Exit_status %q, want 1 (a subjob exited 3)", got)
	}
	if st := jobAttr(t, c, ok, "job_state"); st != "F" {
		t.Errorf("afterok on a failed array: %s, want deleted (F)", st)
	}
	if st := jobAttr(t, c, notok, "job_state"); st != "Q" {
		t.Errorf("afternotokarray on a failed array: %s", st)
	}
	if _, err := submit(c, depend("afterok:2[1]")); proto.CodeOf(err) != proto.PBSE_NOSUP {
		t.Errorf("a dependency on a subjob: %v", err)
	}
}

// TestArraySubmissionRules: the server's and a queue's max_array_size, a
// non-rerunnable array, max_run_subjobs on a job that is not an array, a
// malformed range, and qalter of the indices are refused.
func TestArraySubmissionRules(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	if _, err := submit(c, arrayAttr("1-10001")); proto.CodeOf(err) != proto.PBSE_MaxArraySize {
		t.Errorf("10,001 subjobs with the default max_array_size: %v", err)
	}
	for _, o := range []proto.ObjectType{proto.ObjServer, proto.ObjQueue} {
		name := ""
		if o == proto.ObjQueue {
			name = "workq"
		}
		if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: o, Name: name, Attrs: []proto.Attr{{Name: proto.AttrMaxArraySize, Value: "4"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := submit(c, arrayAttr("1-5")); proto.CodeOf(err) != proto.PBSE_MaxArraySize || !strings.Contains(err.Error(), "max_array_size") {
			t.Errorf("5 subjobs, max_array_size 4 on %v: %v", o, err)
		}
		c.Manager(&proto.ManagerRequest{Command: proto.MgrUnset, Object: o, Name: name, Attrs: []proto.Attr{{Name: proto.AttrMaxArraySize}}})
	}
	if _, err := submit(c, arrayAttr("1-4"), proto.Attr{Name: proto.AttrRerunable, Value: "n"}); proto.CodeOf(err) != proto.PBSE_BADATVAL {
		t.Errorf("non-rerunnable array: %v", err)
	}
	if _, err := submit(c, proto.Attr{Name: proto.AttrMaxRunSubjobs, Value: "2"}); proto.CodeOf(err) != proto.PBSE_BADATVAL {
		t.Errorf("max_run_subjobs without -J: %v", err)
	}
	if _, err := submit(c, arrayAttr("5-1")); proto.CodeOf(err) != proto.PBSE_BADATVAL {
		t.Errorf("a range that ends before it starts: %v", err)
	}
	id := mustSubmit(t, c, arrayAttr("1-3%2"))
	if got := jobAttr(t, c, id, proto.AttrMaxRunSubjobs); got != "2" {
		t.Errorf("max_run_subjobs from %%2: %q", got)
	}
	err := c.AlterJob(id, []proto.Attr{arrayAttr("1-9")})
	if proto.CodeOf(err) != proto.PBSE_ATTRRO {
		t.Errorf("qalter of array_indices_submitted: %v", err)
	}
	if err := c.AlterJob(id, []proto.Attr{{Name: proto.AttrMaxRunSubjobs, Value: "1"}}); err != nil {
		t.Errorf("qalter of max_run_subjobs: %v", err)
	}
	if got := jobAttr(t, c, id, proto.AttrMaxRunSubjobs); got != "1" {
		t.Errorf("max_run_subjobs after qalter: %q", got)
	}
	seq := strings.TrimSuffix(id, "[].srv")
	if err := c.AlterJob(seq+"[2]", []proto.Attr{{Name: proto.AttrPriority, Value: "5"}}); err != nil {
		t.Errorf("qalter of a subjob: %v", err)
	}
	if got := jobAttr(t, c, seq+"[2]", proto.AttrPriority); got != "5" {
		t.Errorf("subjob Priority after qalter: %q", got)
	}
	if got := jobAttr(t, c, seq+"[1]", proto.AttrPriority); got != "0" {
		t.Errorf("another subjob's Priority after qalter of 3[2]: %q", got)
	}
}

// TestArrayCostsOneJob: a queued array of 100,000 subjobs costs the
// server about what one job costs, in memory and in the store.
func TestArrayCostsOneJob(t *testing.T) {
	s, c := newTestServer(t, store.Options{})
	if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjServer, Attrs: []proto.Attr{{Name: proto.AttrMaxArraySize, Value: "100000"}}}); err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	dbSize := func() int64 {
		fi, err := os.Stat(s.st.Path())
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	mustSubmit(t, c) // warm up the paths a submission takes
	before, beforeDB := heap(), dbSize()
	id := mustSubmit(t, c, arrayAttr("1-100000"))
	grew, grewDB := int64(heap())-int64(before), dbSize()-beforeDB
	t.Logf("an array of 100,000 subjobs: heap +%d bytes, store +%d bytes", grew, grewDB)
	if grew > 64<<10 {
		t.Errorf("an array of 100,000 queued subjobs grew the heap by %d bytes; want about one job's (< 64 KiB)", grew)
	}
	if grewDB > 64<<10 {
		t.Errorf("an array of 100,000 queued subjobs grew the store by %d bytes", grewDB)
	}
	// Deleting all of them at once is one change of the parent.
	if err := c.DeleteJob(id, proto.DeleteOptions{KillDelay: proto.NoKillDelay}); err != nil {
		t.Fatal(err)
	}
	if got := jobAttr(t, c, id, proto.AttrArrayStateCount); got != "Queued:0 Running:0 Exiting:0 Expired:100000 " {
		t.Errorf("after qdel: %q", got)
	}
	if grew := int64(heap()) - int64(before); grew > 64<<10 {
		t.Errorf("deleting the array grew the heap by %d bytes", grew)
	}
	if got := jobAttr(t, c, id, proto.AttrExitStatus); got != "271" {
		t.Errorf("an array deleted before any subjob ran: Exit_status %q, want %d", got, model.ExitDeleted)
	}
}

// TestArraySelect: qselect lists an array once; -J only arrays; -T the
// subjobs instead, each matched on its own state.
func TestArraySelect(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	plain := mustSubmit(t, c)
	id := mustSubmit(t, c, arrayAttr("1-3"))
	runSub(t, s, "1[2]")
	sel := func(req *proto.SelectRequest) string {
		t.Helper()
		ids, err := c.SelectJobs(req)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(ids, " ")
	}
	if got := sel(&proto.SelectRequest{}); got != plain+" "+id {
		t.Errorf("qselect: %q", got)
	}
	if got := sel(&proto.SelectRequest{Criteria: []proto.Attr{{Name: proto.AttrArray, Value: "True", Op: proto.OpEQ}}}); got != id {
		t.Errorf("qselect -J: %q", got)
	}
	if got := sel(&proto.SelectRequest{Subjobs: true}); got != plain+" 1[1].srv 1[2].srv 1[3].srv" {
		t.Errorf("qselect -T: %q", got)
	}
	if got := sel(&proto.SelectRequest{Subjobs: true, Criteria: []proto.Attr{{Name: proto.AttrJobState, Value: "R", Op: proto.OpEQ}}}); got != "1[2].srv" {
		t.Errorf("qselect -T -s R: %q", got)
	}
}

// TestDeletePurge: qdel -x removes a finished job's history, a queued
// job leaves none, an array goes with its subjobs, and a subjob alone is
// refused.
func TestDeletePurge(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	purge := proto.DeleteOptions{Purge: true, KillDelay: proto.NoKillDelay}
	done := mustSubmit(t, c)
	ran(t, s, done, 0)
	queued := mustSubmit(t, c)
	arr := mustSubmit(t, c, arrayAttr("1-3"))
	runSub(t, s, arr)
	gone := func(id string) bool {
		_, errs, err := c.StatusJobs(&proto.StatusRequest{IDs: []string{id}, History: true})
		return err == nil && len(errs) == 1 && errs[0].Code == proto.PBSE_UNKJOBID
	}
	if err := c.DeleteJob(done, proto.DeleteOptions{KillDelay: proto.NoKillDelay}); proto.CodeOf(err) != proto.PBSE_HISTJOBID {
		t.Errorf("qdel of a finished job without -x: %v", err)
	}
	for _, id := range []string{done, queued} {
		if err := c.DeleteJob(id, purge); err != nil {
			t.Errorf("qdel -x %s: %v", id, err)
		}
		if !gone(id) {
			t.Errorf("%s still has history after qdel -x", id)
		}
	}
	seq := strings.TrimSuffix(arr, "[].srv")
	if err := c.DeleteJob(seq+"[2]", purge); proto.CodeOf(err) != proto.PBSE_NOSUP {
		t.Errorf("qdel -x of a subjob: %v", err)
	}
	c.DeleteJob(arr, purge) // its running subjob has no mom to kill it: ended below
	if gone(arr) {
		t.Fatalf("the array went before its running subjob ended")
	}
	endJob(t, s, seq+"[1]", 271)
	if !gone(arr) || !gone(seq+"[1]") {
		t.Errorf("the array keeps history after qdel -x and its last subjob's end")
	}
}
