package state

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/entlim"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// recorder is a Watcher that writes down what it is told.
type recorder struct{ calls []string }

func (r *recorder) Leaving(j *model.Job) { r.calls = append(r.calls, "leaving "+j.ID) }
func (r *recorder) Entered(j *model.Job) { r.calls = append(r.calls, "entered "+j.ID) }
func (r *recorder) Removed(j *model.Job) { r.calls = append(r.calls, "removed "+j.ID) }

// table is a table whose clock is *now and whose hosts are the node name
// up to its first "-" ("h1-a" and "h1-b" are on h1).
func table(t *testing.T, now *int64, nodes []string, w Watcher) *Jobs {
	t.Helper()
	rt := resc.NewTable(nil)
	return New(Config{
		Table: func() *resc.Table { return rt },
		HostNodes: func(held []string) []string {
			hosts := map[string]bool{}
			for _, n := range held {
				hosts[strings.SplitN(n, "-", 2)[0]] = true
			}
			var out []string
			for _, n := range nodes {
				if hosts[strings.SplitN(n, "-", 2)[0]] {
					out = append(out, n)
				}
			}
			return out
		},
		Now:   func() int64 { return *now },
		Watch: w,
	})
}

// job is job seq of user u in queue q, in state st.
func job(seq int64, u, q string, st model.JobState) *model.Job {
	return &model.Job{Seq: seq, ID: fmt.Sprintf("%d.srv", seq), Owner: u + "@h", EUser: u, EGroup: "g", Queue: q, State: st, QueueRank: seq}
}

// running is job seq running on exec_vnode ev with place pl.
func running(seq int64, ev, pl string) *model.Job {
	j := job(seq, "alice", "workq", model.StateRunning)
	j.Alloc = resc.ParseAlloc("", ev)
	j.ResourceList = j.ResourceList.Set(proto.ResNcpus, "1").Set(proto.ResPlace, pl)
	return j
}

// array is array seq with indices lo..hi, queued.
func array(seq int64, lo, hi int) *model.Job {
	j := job(seq, "alice", "workq", model.StateQueued)
	j.ID = fmt.Sprintf("%d[].srv", seq)
	j.Array = &model.Array{Indices: model.IndexSet{{Lo: lo, Hi: hi, Step: 1}}}
	return j
}

// subjob is subjob index of array p, in state st.
func subjob(p *model.Job, index int, st model.JobState) *model.Job {
	j := job(p.Seq, p.EUser, p.Queue, st)
	j.ID = fmt.Sprintf("%d[%d].srv", p.Seq, index)
	j.IsSubjob, j.Index = true, index
	return j
}

func ids(js []*model.Job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.ID)
	}
	return out
}

func TestListingOrder(t *testing.T) {
	t.Parallel()
	now := int64(100)
	tab := table(t, &now, nil, nil)
	p := array(2, 1, 3)
	for _, j := range []*model.Job{job(5, "a", "q", model.StateQueued), job(1, "a", "q", model.StateQueued), p, job(3, "a", "q", model.StateHeld)} {
		tab.Insert(j)
	}
	s2 := subjob(p, 2, model.StateRunning)
	s2.QueueRank = 99 // a record older than a qorder of its array: it takes its parent's rank
	tab.Insert(s2)
	tab.Insert(subjob(p, 1, model.StateQueued))
	want := []string{"1.srv", "2[].srv", "2[1].srv", "2[2].srv", "3.srv", "5.srv"}
	if got := ids(tab.List()); !slices.Equal(got, want) {
		t.Fatalf("listing %v, want %v", got, want)
	}
	if got := ids(tab.LiveSubjobs(p)); !slices.Equal(got, []string{"2[1].srv", "2[2].srv"}) {
		t.Errorf("live subjobs %v", got)
	}
	three, _ := tab.Top(3)
	if i := tab.After(three); tab.List()[i].ID != "5.srv" {
		t.Errorf("After(3) is %d (%s), want 5's place", i, tab.List()[i].ID)
	}

	// qorder's swap of 1 and the array: the subjobs move with their parent.
	one, _ := tab.Top(1)
	group := append([]*model.Job{p}, tab.LiveSubjobs(p)...)
	now = 200
	tab.Reorder(func() {
		tab.Update(one, func() { one.QueueRank = 2 })
		for _, j := range group {
			tab.Update(j, func() { j.QueueRank = 1 })
		}
	}, append(group, one)...)
	want = []string{"2[].srv", "2[1].srv", "2[2].srv", "1.srv", "3.srv", "5.srv"}
	if got := ids(tab.List()); !slices.Equal(got, want) {
		t.Fatalf("after the swap %v, want %v", got, want)
	}
	if one.Mtime != 200 {
		t.Errorf("a job changed on the update path has mtime %d, want the clock's 200", one.Mtime)
	}

	// Removing keeps the rest in order; a removed job is no longer held.
	tab.Remove(one)
	want = []string{"2[].srv", "2[1].srv", "2[2].srv", "3.srv", "5.srv"}
	if got := ids(tab.List()); !slices.Equal(got, want) || tab.Holds(one) || tab.Len() != 5 {
		t.Errorf("after removing 1: %v (len %d, holds %v)", got, tab.Len(), tab.Holds(one))
	}
}

func TestCounts(t *testing.T) {
	t.Parallel()
	now := int64(1)
	tab := table(t, &now, nil, nil)
	a1 := job(1, "alice", "workq", model.StateQueued)
	a2 := job(2, "alice", "workq", model.StateHeld)
	b3 := job(3, "bob", "long", model.StateQueued)
	p := array(4, 1, 4) // counted once, by its parent
	for _, j := range []*model.Job{a1, a2, b3, p} {
		tab.Insert(j)
	}
	tab.Insert(subjob(p, 1, model.StateRunning))
	cases := []struct {
		name string
		got  any
		want any
	}{
		{"Queued(workq)", tab.Queued("workq"), 3},
		{"Queued(long)", tab.Queued("long"), 1},
		{"Queued(none)", tab.Queued("none"), 0},
		{"QueuedBy(workq, alice)", tab.QueuedBy("workq", "alice"), 3},
		{"QueuedBy(, bob)", tab.QueuedBy("", "bob"), 1},
		{"Unfinished", tab.Unfinished(), 4},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got, n := tab.StateCount("workq"); got != "Transit:0 Queued:2 Held:1 Waiting:0 Running:1 Exiting:0 Begun:0 " || n != 4 {
		t.Errorf("state_count of workq %q (%d)", got, n)
	}
	if got, n := tab.StateCount(""); got != "Transit:0 Queued:3 Held:1 Waiting:0 Running:1 Exiting:0 Begun:0 " || n != 5 {
		t.Errorf("state_count of the server %q (%d)", got, n)
	}

	// A change on the update path moves the job's counts with it.
	tab.Update(a2, func() { a2.State = model.StateFinished })
	tab.Update(b3, func() { b3.Queue = "workq" })
	if tab.Queued("workq") != 3 || tab.Queued("long") != 0 || tab.Unfinished() != 3 || tab.QueuedBy("", "alice") != 2 {
		t.Errorf("after the changes: workq %d, long %d, unfinished %d, alice %d", tab.Queued("workq"), tab.Queued("long"), tab.Unfinished(), tab.QueuedBy("", "alice"))
	}
	qs := tab.QueueStates()
	if _, ok := qs["long"]; ok {
		t.Errorf("a queue with no jobs left shows in the metrics' counts: %v", qs)
	}
	if qs["workq"] != [8]int{0, 3, 0, 0, 1, 0, 0, 1} {
		t.Errorf("workq by state %v", qs["workq"])
	}

	// Entities count every unfinished job that is not an array; the
	// array is left to the caller, which counts its subjobs live.
	n, ok := tab.Entity("workq", entlim.User, "alice")
	if !ok || n.Jobs != 1 || n.Queued != 1 {
		t.Errorf("alice in workq: %+v %v, want 1 job, 1 queued", n, ok)
	}
	if n, ok := tab.Entity("", entlim.Overall, ""); !ok || n.Jobs != 2 {
		t.Errorf("the complex: %+v %v, want 2 jobs", n, ok)
	}
	var arrays []string
	for a := range tab.UnfinishedArrays() {
		arrays = append(arrays, a.ID)
	}
	if !slices.Equal(arrays, []string{"4[].srv"}) {
		t.Errorf("unfinished arrays %v", arrays)
	}
	v := tab.Version()
	tab.Touch(a1)
	if tab.Version() != v+1 || a1.Version != v+1 {
		t.Errorf("Touch: version %d, job %d, want %d", tab.Version(), a1.Version, v+1)
	}
}

func TestHoldings(t *testing.T) {
	t.Parallel()
	now := int64(1)
	nodes := []string{"h1-a", "h1-b", "h2-a"}
	cases := []struct {
		name, ev, place string
		excl            []string // the nodes held whole while it runs
	}{
		{"shared", "(h1-a:ncpus=1)", "free", nil},
		{"excl", "(h1-a:ncpus=1)", "excl", []string{"h1-a"}},
		{"exclhost", "(h1-a:ncpus=1)", "exclhost", []string{"h1-a", "h1-b"}},
		{"excl on two", "(h1-a:ncpus=1)+(h2-a:ncpus=1)", "scatter:excl", []string{"h1-a", "h2-a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tab := table(t, &now, nodes, nil)
			j := running(1, c.ev, c.place)
			tab.Insert(j)
			for _, n := range nodes {
				if got, want := tab.Exclusively(n), slices.Contains(c.excl, n); got != want {
					t.Errorf("Exclusively(%s) = %v, want %v", n, got, want)
				}
			}
			if tab.JobsOn("h1-a") != 1 || tab.JobsOn("h1-b") != 0 {
				t.Errorf("jobs on h1-a %d, h1-b %d", tab.JobsOn("h1-a"), tab.JobsOn("h1-b"))
			}
			if got := tab.Assigned("h1-a")[proto.ResNcpus]; got != 1 {
				t.Errorf("assigned ncpus on h1-a %v, want 1", got)
			}
			// Suspended to be preempted, it holds nothing.
			tab.Update(j, func() { j.Suspended, j.Substate = true, model.SubSchedSusp })
			for _, n := range nodes {
				if tab.Exclusively(n) || tab.JobsOn(n) != 0 || tab.Assigned(n)[proto.ResNcpus] != 0 {
					t.Errorf("a job suspended to preempt it still holds %s", n)
				}
			}
			tab.Update(j, func() { j.Suspended, j.Substate = false, model.SubRunning })
			tab.Update(j, func() { j.State = model.StateFinished })
			if tab.Exclusively("h1-a") || tab.JobsOn("h1-a") != 0 {
				t.Errorf("a finished job still holds h1-a")
			}
		})
	}
}

func TestArrays(t *testing.T) {
	t.Parallel()
	now := int64(1)
	tab := table(t, &now, nil, nil)
	p := array(7, 1, 5)
	p.Array.Deleted = model.IndexSet{{Lo: 5, Hi: 5, Step: 1}}
	own := subjob(p, 2, model.StateRunning)
	held := subjob(p, 3, model.StateHeld)
	tab.Load([]*model.Job{p}, []*model.Job{own, held}, map[int64][]*model.SubjobEnd{7: {{Index: 4, HasExit: true, Exit: 3}}})

	// Index 1 waits with nothing of its own; 3 is held, a job of its own,
	// and still counts among the queued; 4 ended; 5 was deleted.
	a := p.Array
	if got := a.Queued.String(); got != "1,3" {
		t.Errorf("queued indices %q, want 1,3", got)
	}
	if a.Running != 1 || a.Expired != 2 {
		t.Errorf("running %d expired %d, want 1 and 2", a.Running, a.Expired)
	}
	if e, ok := tab.Ended(7, 4); !ok || e.Exit != 3 {
		t.Errorf("the end of subjob 4: %+v %v", e, ok)
	}
	if _, ok := tab.Ended(7, 2); ok {
		t.Errorf("a running subjob has an end")
	}

	// The running subjob ends: it leaves the table, its end is kept.
	tab.Update(own, func() { own.State = model.StateExiting })
	if a.Running != 0 || a.Exiting != 1 {
		t.Errorf("exiting: running %d exiting %d", a.Running, a.Exiting)
	}
	tab.Update(own, func() { own.State = model.StateFinished })
	tab.Remove(own)
	tab.EndSubjob(p, &model.SubjobEnd{Index: 2})
	if a.Exiting != 0 || a.Expired != 3 || len(tab.Ends(7)) != 2 {
		t.Errorf("after its end: exiting %d expired %d ends %d", a.Exiting, a.Expired, len(tab.Ends(7)))
	}
	if _, ok := tab.Get(model.JobKey{Seq: 7, Index: 2}); ok {
		t.Errorf("the ended subjob is still in the table")
	}

	// The array's removal takes its ends with it.
	tab.Remove(held)
	tab.Remove(p)
	if len(tab.Ends(7)) != 0 || tab.Len() != 0 {
		t.Errorf("after the array went: %d ends, %d jobs", len(tab.Ends(7)), tab.Len())
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	now := int64(1)
	tab := table(t, &now, nil, nil)
	p := array(2, 1, 3)
	tab.Insert(job(1, "a", "q", model.StateQueued))
	tab.Insert(p)
	tab.Insert(subjob(p, 2, model.StateRunning))
	cases := []struct {
		id, want string // "" for PBSE_UNKJOBID
	}{
		{"1", "1.srv"},
		{"1.srv", "1.srv"},
		{"2[]", "2[].srv"},
		{"2[].srv", "2[].srv"},
		{"2[2].srv", "2[2].srv"},
		{"2[1]", ""},   // waits in its parent's indices: no job of its own
		{"2[1-3]", ""}, // a range names no one job
		{"1[]", ""},    // not an array
		{"9", ""},
		{"junk", ""},
	}
	for _, c := range cases {
		j, err := tab.Lookup(c.id)
		if c.want == "" {
			var pe *proto.Error
			if !errors.As(err, &pe) || pe.Code != proto.PBSE_UNKJOBID {
				t.Errorf("Lookup(%q) = %v, %v; want PBSE_UNKJOBID", c.id, j, err)
			}
			continue
		}
		if err != nil || j.ID != c.want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", c.id, j, err, c.want)
		}
	}
}

func TestWatcherSeesEveryChange(t *testing.T) {
	t.Parallel()
	now := int64(1)
	w := &recorder{}
	tab := table(t, &now, nil, w)
	j := job(1, "a", "q", model.StateQueued)
	tab.Insert(j)
	tab.Update(j, func() { j.Comment = "x" })
	h := tab.Transit(j, func() model.Hooks { j.State = model.StateHeld; return model.Hooks{Eligible: true} })
	tab.Recount(j, func() {})
	tab.Remove(j)
	if !h.Eligible {
		t.Errorf("Transit lost the transition's hooks")
	}
	want := []string{
		"entered 1.srv",
		"leaving 1.srv", "entered 1.srv",
		"leaving 1.srv", "entered 1.srv",
		"leaving 1.srv", "entered 1.srv",
		"leaving 1.srv", "removed 1.srv",
	}
	if !slices.Equal(w.calls, want) {
		t.Errorf("watcher told %v, want %v", w.calls, want)
	}
}
