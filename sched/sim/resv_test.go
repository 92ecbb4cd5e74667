package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/sched/core"
)

func simNodes() []*core.Node {
	return []*core.Node{
		{Name: "n1", Avail: core.Amounts{"ncpus": 4}, Assigned: core.Amounts{}, IdealLoad: -1, MaxLoad: -1},
		{Name: "n2", Avail: core.Amounts{"ncpus": 4}, Assigned: core.Amounts{}, IdealLoad: -1, MaxLoad: -1},
	}
}

func TestParseReservations(t *testing.T) {
	t.Parallel()
	origin := time.Unix(1_000_000, 0)
	rs, err := ParseReservations(strings.NewReader("# maintenance\nm 3600 4:00:00 all FREQ=WEEKLY;COUNT=3\nx 10 60 n2\n"), simNodes(), origin)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || len(rs[0].Occurrences) != 3 || len(rs[0].Occurrences[0].Where) != 2 || rs[0].Duration != 4*time.Hour {
		t.Fatalf("%+v", rs)
	}
	if d := rs[0].Occurrences[2].Start.Sub(origin); d != time.Hour+14*24*time.Hour {
		t.Errorf("third occurrence at %v", d)
	}
	if w := rs[1].Occurrences[0].Where; len(w) != 1 || w[0].Node != "n2" || w[0].Amounts()["ncpus"] != 4 {
		t.Errorf("x holds %+v", w)
	}
	for _, bad := range []string{"m 1 60", "m -1 60 all", "m 1 0 all", "m 1 60 n9", "m 1 60 all FREQ=WEEKLY", "m 1 60 all\nm 2 60 all",
		"m 1 8:00:00 all FREQ=HOURLY;COUNT=2"} {
		if _, err := ParseReservations(strings.NewReader(bad), simNodes(), origin); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A replay with a maintenance window: EASY starts no job that would run
// into it (the long job waits for its end), while a job that ends before
// it starts at once; without the window both start at once.
func TestReplayDrainsForReservation(t *testing.T) {
	t.Parallel()
	nodes := simNodes()
	origin := time.Unix(1_000_000, 0)
	jobs := []Job{
		{ID: "long", Submit: 0, Run: 3000, Walltime: 3600, Procs: 4},
		{ID: "short", Submit: 0, Run: 500, Walltime: 600, Procs: 4},
	}
	resvs, err := ParseReservations(strings.NewReader("m 1000 1:00:00 all\n"), nodes, origin)
	if err != nil {
		t.Fatal(err)
	}
	run := func(rs []*core.Resv) map[string]Outcome {
		t.Helper()
		out := map[string]Outcome{}
		cfg := Config{Nodes: simNodes(), Policy: referencePolicy(t, true), Origin: origin, Resvs: rs}
		err := Run(cfg, Jobs(jobs), func(o Outcome) error { out[o.Job.ID] = o; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	with, without := run(resvs), run(nil)
	if with["short"].Start != 0 || with["long"].Start != 1000+3600 {
		t.Errorf("with the window: short at %d, long at %d (want 0 and 4600)", with["short"].Start, with["long"].Start)
	}
	if without["long"].Start != 0 || without["short"].Start != 0 {
		t.Errorf("without: long at %d, short at %d", without["long"].Start, without["short"].Start)
	}
}

// FuzzParseReservations: any file is refused or gives reservations whose
// occurrences are in order and hold known nodes.
func FuzzParseReservations(f *testing.F) {
	f.Add("m 3600 4:00:00 all FREQ=WEEKLY;COUNT=3\n")
	f.Add("x 10 60 n1,n2 # c\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseReservations(strings.NewReader(s), simNodes(), time.Unix(0, 0))
		if err != nil {
			if errors.Is(err, errors.ErrUnsupported) {
				t.Fatal(err)
			}
			return
		}
		for _, r := range rs {
			for i, o := range r.Occurrences {
				if len(o.Where) == 0 || i > 0 && o.Start.Before(r.Occurrences[i-1].Start.Add(r.Duration)) {
					t.Fatalf("%q: %+v", s, r)
				}
			}
		}
	})
}
