package fifo

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched/core"
)

// TestElasticRunningOrdered: the running elastic jobs below their maximum,
// most important first, are the same whether the world promises its
// queued jobs come last (World.Ordered: the list stops at the first) or
// not (every job is looked at).
func TestElasticRunningOrdered(t *testing.T) {
	t.Parallel()
	sel := func(s string) resc.Select {
		v, err := resc.ParseSelect(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	chunks := func(n int) []core.Chunk { return make([]core.Chunk, n) }
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	jobs := []*core.Job{
		{ID: "rigid", State: core.JobRunning, Select: sel("2:ncpus=1"), Where: chunks(2), Stime: at(0)},
		{ID: "late", State: core.JobRunning, Select: sel("1-4:ncpus=1"), Where: chunks(1), Stime: at(20)},
		{ID: "full", State: core.JobRunning, Select: sel("1-2:ncpus=1"), Where: chunks(2), Stime: at(0)},
		{ID: "early", State: core.JobRunning, Select: sel("1-4:ncpus=1"), Where: chunks(3), Stime: at(10)},
		{ID: "urgent", State: core.JobRunning, Select: sel("2-3:ncpus=1"), Where: chunks(2), Stime: at(30), Priority: 5},
		{ID: "queued", State: core.JobQueued, Select: sel("1-4:ncpus=1")},
		{ID: "queued2", State: core.JobQueued, Select: sel("1:ncpus=1")},
	}
	want := []string{"urgent", "early", "late"}
	for _, ordered := range []bool{false, true} {
		w := &core.World{Jobs: jobs, Ordered: ordered}
		var got []string
		for _, j := range elasticRunning(w) {
			got = append(got, j.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("ordered %v: %v, want %v", ordered, got, want)
		}
	}
}

// TestElasticWithinLimits: a ranged job starts and grows only as far as
// the per-user and per-group resource limits and the queue's and
// server's resources_max let it (issue 29: "1-3:ncpus=40" once started
// wide and grew to 120 cpus past limits that refuse "3:ncpus=40").
func TestElasticWithinLimits(t *testing.T) {
	t.Parallel()
	three := func() *world {
		return newWorld().node("n1", 40, "free").node("n2", 40, "free").node("n3", 40, "free")
	}
	onServer := func(w *world, attrs ...proto.Attr) *world {
		w.server.Attrs = append(w.server.Attrs, attrs...)
		return w
	}
	onQueue := func(w *world, attrs ...proto.Attr) *world {
		w.queues[0].Attrs = append(w.queues[0].Attrs, attrs...)
		return w
	}
	running := func(w *world) *world {
		w.nodes[0].Attrs = append(w.nodes[0].Attrs, r("resources_assigned", "ncpus", "40"))
		return w.job(1, "R", "workq", "u", "1-3:ncpus=40", ago(10), onNode("n1", 40))
	}
	summary := func(p *core.Plan) []string {
		var out []string
		for _, d := range p.Decisions() {
			switch d.Kind {
			case core.DecideRun, core.DecideGrow:
				kind := "run"
				if d.Kind == core.DecideGrow {
					kind = "grow"
				}
				out = append(out, fmt.Sprintf("%s %s %d", kind, strings.TrimSuffix(d.Job.ID, ".srv"), len(d.Where)))
			case core.DecideComment:
				out = append(out, "comment "+strings.TrimSuffix(d.Job.ID, ".srv")+" "+strings.TrimPrefix(d.Text, "Not Running: "))
			}
		}
		return out
	}
	balanced := Inputs{Settings: Settings{Balanced: true}}
	for _, tt := range []struct {
		name string
		w    *world
		in   Inputs
		want []string
	}{
		{"no limit: it starts as wide as the nodes", three().job(1, "Q", "workq", "u", "1-3:ncpus=40"), Inputs{}, []string{"run 1 3"}},
		{"the server's max_user_res: its minimum only",
			onServer(three(), r("max_user_res", "ncpus", "40")).job(1, "Q", "workq", "u", "1-3:ncpus=40"), Inputs{}, []string{"run 1 1"}},
		{"a queue's max_group_res: two chunks",
			onQueue(three(), r("max_group_res", "ncpus", "80")).job(1, "Q", "workq", "u", "1-3:ncpus=40"), Inputs{}, []string{"run 1 2"}},
		{"the user's other job counts",
			onServer(three(), r("max_user_res", "ncpus", "80")).job(1, "Q", "workq", "u", "1-3:ncpus=40").job(2, "Q", "workq", "u", "1:ncpus=40"),
			Inputs{}, []string{"run 1 2", "comment 2 Would exceed user u's limit on resource ncpus in complex"}},
		{"the queue's resources_max.ncpus",
			onQueue(three(), r("resources_max", "ncpus", "80")).job(1, "Q", "workq", "u", "1-3:ncpus=40"), Inputs{}, []string{"run 1 2"}},
		{"running, no limit: it grows to its maximum", running(three()), Inputs{}, []string{"grow 1 2"}},
		{"running at the user's limit: no growth", running(onServer(three(), r("max_user_res", "ncpus", "40"))), Inputs{}, nil},
		{"running, one chunk below the limit: one more",
			running(onServer(three(), r("max_user_res", "ncpus", "80"))), Inputs{}, []string{"grow 1 1"}},
		{"balanced, shared out within the limit",
			running(onQueue(three(), r("max_user_res", "ncpus", "80"))), balanced, []string{"grow 1 1"}},
		{"the server's resources_max.ncpus stops growth",
			running(onServer(three(), r("resources_max", "ncpus", "40"))), Inputs{}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := summary(tt.w.run(tt.in)); !slices.Equal(got, tt.want) {
				t.Fatalf("decisions\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
