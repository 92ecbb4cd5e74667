package fifo

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/core"
)

// resvOutcome is outcome with reservations' verdicts: "confirm R1 n1"
// (nodes of each occurrence, ";" between), "deny R1 <why>".
func resvOutcome(p *core.Plan) []string {
	var out []string
	for _, d := range p.Decisions() {
		if d.Kind != core.DecideConfirmResv {
			continue
		}
		if len(d.Occurrences) == 0 {
			out = append(out, "deny "+d.Resv.ID+" "+d.Text)
			continue
		}
		var occ []string
		for _, where := range d.Occurrences {
			occ = append(occ, strings.Join(nodeNames(where), "+"))
		}
		out = append(out, "confirm "+d.Resv.ID+" "+strings.Join(occ, ";"))
	}
	for _, d := range p.Decisions() {
		if d.Kind == core.DecideRun {
			out = append(out, "run "+strings.TrimSuffix(d.Job.ID, ".srv")+" "+d.Where[0].Node)
		}
	}
	return out
}

func testResv(id string, state core.ResvState, sel string, from, dur time.Duration, nodes ...string) *core.Resv {
	s, _ := resc.ParseSelect(sel)
	r := &core.Resv{ID: id, Queue: strings.TrimSuffix(id, ".srv"), State: state, Select: s, Totals: s.Sums(), Duration: dur}
	o := core.Occurrence{Start: now.Add(from)}
	for _, n := range nodes {
		o.Where = append(o.Where, core.Chunk{Node: n, Chunk: s[0].One()})
	}
	r.Occurrences = []core.Occurrence{o}
	return r
}

// Reservations on the calendar: a confirmed one keeps its node for its
// window, so EASY starts the job that ends before it and not the one
// that would run into it; an unconfirmed one that fits elsewhere is
// confirmed there, one that overlaps it on the only node left is denied
// naming it; an open reservation's job runs on its node only.
func TestReservationsOnTheCalendar(t *testing.T) {
	t.Parallel()
	w := newWorld().node("n1", 2, "free").node("n2", 2, "free").queue("R7", "Execution", true).
		job(1, "Q", "workq", "u", "1:ncpus=2", r("Resource_List", "walltime", "00:30:00")).
		job(2, "Q", "workq", "u", "1:ncpus=2", r("Resource_List", "walltime", "00:05:00")).
		job(3, "Q", "R7", "u", "1:ncpus=1", r("Resource_List", "walltime", "01:00:00"))
	world := sched.NewWorld(now, w.server, w.queues, w.nodes, w.jobs)
	world.SetResvs([]*core.Resv{
		testResv("R5.srv", core.ResvConfirmed, "1:ncpus=2", 10*time.Minute, time.Hour, "n1"),
		testResv("R6.srv", core.ResvUnconfirmed, "1:ncpus=2", 20*time.Minute, time.Hour),
		testResv("R7.srv", core.ResvRunning, "1:ncpus=1", -time.Minute, 11*time.Minute, "n2"),
		testResv("R8.srv", core.ResvUnconfirmed, "1:ncpus=2", 15*time.Minute, time.Hour),
	})
	got := resvOutcome(DefaultPipeline().Schedule(world, Inputs{Settings: Settings{Backfill: true, BackfillDepth: 100}}))
	want := []string{
		"confirm R8.srv n2",
		"deny R6.srv no room for it: it would overlap R5.srv (n1), R8.srv (n2)",
		"run 3 n2",
		"run 2 n1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
}

// A DEGRADED reservation is tried again on other nodes only once its
// retry time (the server's reserve_retry_time after it was degraded) has
// come: before, it keeps what it holds and gets no verdict.
func TestDegradedReservationRetry(t *testing.T) {
	t.Parallel()
	w := newWorld().node("n1", 2, "down").node("n2", 2, "free")
	for _, c := range []struct {
		name  string
		retry time.Time
		want  []string
	}{
		{"retry not yet due", now.Add(time.Minute), nil},
		{"retry due", now.Add(-time.Second), []string{"confirm R5.srv n2"}},
		{"no retry time", time.Time{}, []string{"confirm R5.srv n2"}},
	} {
		world := sched.NewWorld(now, w.server, w.queues, w.nodes, w.jobs)
		r := testResv("R5.srv", core.ResvDegraded, "1:ncpus=2", 10*time.Minute, time.Hour, "n1")
		r.RetryAt = c.retry
		world.SetResvs([]*core.Resv{r})
		if got := resvOutcome(DefaultPipeline().Schedule(world, Inputs{})); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
