package fifo

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/core"
)

// stfOutcome is outcome with each start's chosen walltime: "run 1 n1
// 30m0s" for a shrink-to-fit job.
func stfOutcome(p *core.Plan) []string {
	out := outcome(p)
	k := 0
	for _, d := range p.Decisions() {
		switch d.Kind {
		case core.DecideRun, core.DecideComment, core.DecideFail, core.DecideHold, core.DecideReserve,
			core.DecideStageIn, core.DecidePreempt, core.DecideResume:
			if d.Kind == core.DecideRun && d.Walltime > 0 {
				out[k] += " " + d.Walltime.String()
			}
			k++
		}
	}
	return out
}

// Shrink-to-fit jobs: started for the longest walltime that ends before
// the next reservation, dedicated time or top job on their node, or kept
// waiting when even their min_walltime would not; a job of fixed
// walltime that would run into the hold waits.
func TestShrinkToFit(t *testing.T) {
	t.Parallel()
	stf := func(lo, hi string) []proto.Attr {
		out := []proto.Attr{r("Resource_List", "min_walltime", lo)}
		if hi != "" {
			out = append(out, r("Resource_List", "max_walltime", hi))
		}
		return out
	}
	resv30 := []*core.Resv{testResv("R5.srv", core.ResvConfirmed, "1:ncpus=1", 30*time.Minute, time.Hour, "n1")}
	backfill := Settings{Backfill: true, BackfillDepth: 100}
	for _, tc := range []struct {
		name  string
		w     *world
		resvs []*core.Resv
		in    Inputs
		want  []string
	}{
		{"a reservation in 30 minutes: the shrink-to-fit job runs for 30 minutes, the 10-hour job waits",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "u", "1:ncpus=1", r("Resource_List", "walltime", "10:00:00")).
				job(2, "Q", "workq", "u", "1:ncpus=1", stf("00:10:00", "10:00:00")...),
			resv30, Inputs{Settings: backfill},
			[]string{"reserve 1 n1 +1h30m0s", "comment 1 " + cNodes, "run 2 n1 30m0s"}},
		{"nothing ahead: its max_walltime",
			newWorld().node("n1", 1, "free").job(1, "Q", "workq", "u", "1:ncpus=1", stf("00:10:00", "10:00:00")...),
			nil, Inputs{Settings: backfill}, []string{"run 1 n1 10h0m0s"}},
		{"no max_walltime: the server's resources_max.walltime",
			func() *world {
				w := newWorld().node("n1", 1, "free").job(1, "Q", "workq", "u", "1:ncpus=1", stf("00:10:00", "")...)
				w.server.Attrs = append(w.server.Attrs, r("resources_max", "walltime", "04:00:00"))
				return w
			}(), nil, Inputs{Settings: backfill}, []string{"run 1 n1 4h0m0s"}},
		{"min_walltime past the reservation: waits, saying so",
			newWorld().node("n1", 1, "free").job(1, "Q", "workq", "u", "1:ncpus=1", stf("00:40:00", "10:00:00")...),
			resv30, Inputs{Settings: backfill}, []string{"comment 1 " + cTopJob + cMinWalltime + "00:40:00"}},
		{"dedicated time in an hour",
			newWorld().node("n1", 1, "free").job(1, "Q", "workq", "u", "1:ncpus=1", stf("00:10:00", "10:00:00")...),
			nil, Inputs{Dedicated: &Window{From: now.Add(time.Hour), To: now.Add(2 * time.Hour)}},
			[]string{"run 1 n1 1h0m0s"}},
		{"dedicated time before its min_walltime ends",
			newWorld().node("n1", 1, "free").job(1, "Q", "workq", "u", "1:ncpus=1", stf("02:00:00", "10:00:00")...),
			nil, Inputs{Dedicated: &Window{From: now.Add(time.Hour), To: now.Add(2 * time.Hour)}},
			[]string{"comment 1 " + cDedBoundary}},
		{"in dedicated time a dedicated queue's job ends with it",
			newWorld().queue("ded_q", "Execution", true).node("n1", 1, "free").
				job(1, "Q", "ded_q", "u", "1:ncpus=1", stf("00:01:00", "20:00:00")...),
			nil, Inputs{Settings: Settings{DedicatedPrefix: "ded"}, Dedicated: &Window{From: now.Add(-20 * time.Minute), To: now.Add(100 * time.Minute)}},
			[]string{"run 1 n1 1h40m0s"}},
		{"a top job's planned start bounds it",
			newWorld().node("n1", 2, "free", r("resources_assigned", "ncpus", "1")).
				job(9, "R", "workq", "u", "1:ncpus=1", r("Resource_List", "walltime", "01:00:00"), a("stime", strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10)), a("exec_vnode", "(n1:ncpus=1)")).
				job(1, "Q", "workq", "u", "1:ncpus=2", r("Resource_List", "walltime", "01:00:00")).
				job(2, "Q", "workq", "u", "1:ncpus=1", stf("00:01:00", "10:00:00")...),
			nil, Inputs{Settings: backfill},
			[]string{"reserve 1 n1 +50m0s", "comment 1 " + cNodes, "run 2 n1 50m0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			world := sched.NewWorld(now, tc.w.server, tc.w.queues, tc.w.nodes, tc.w.jobs)
			if tc.resvs != nil {
				world.SetResvs(tc.resvs)
			}
			got := stfOutcome(DefaultPipeline().Schedule(world, tc.in))
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
