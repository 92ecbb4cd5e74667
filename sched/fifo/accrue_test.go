package fifo

import (
	"reflect"
	"testing"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/sched/formula"
)

// TestAccrueDecisions: with the server's eligible_time_enable True, a
// queued job its user's, group's or project's run limit holds back is
// told ineligible (OpenPBS's scheduler does so), one no longer held back
// eligible again; an overall limit, or waiting for nodes, leaves it
// eligible; with eligible_time_enable off nothing is told.
func TestAccrueDecisions(t *testing.T) {
	t.Parallel()
	base := func(enabled bool, limit string) *world {
		w := newWorld().node("n1", 4, "free", r("resources_assigned", "ncpus", "2")).
			job(1, "R", "workq", "u", "1:ncpus=2", ago(100), onNode("n1", 2), a("project", "proj1"), a("accrue_type", "3"))
		if enabled {
			w.server.Attrs = append(w.server.Attrs, a("eligible_time_enable", "True"))
		}
		if limit != "" {
			w.server.Attrs = append(w.server.Attrs, a("max_run", limit))
		}
		return w
	}
	next := func(w *world, accrue, sel string) *world {
		return w.job(2, "Q", "workq", "u", sel, a("project", "proj1"), a("accrue_type", accrue))
	}
	for _, tt := range []struct {
		name string
		w    *world
		want []string
	}{
		{"a project's limit", next(base(true, "[p:proj1=1]"), "2", "1:ncpus=2"),
			[]string{"ineligible 2", "comment 2 Server job limit reached for project proj1"}},
		{"a user's limit, already ineligible", next(base(true, "[u:PBS_GENERIC=1]"), "1", "1:ncpus=2"),
			[]string{"comment 2 User has reached server running job limit."}},
		{"the overall limit", next(base(true, "[o:PBS_ALL=1]"), "2", "1:ncpus=2"),
			[]string{"comment 2 Server job limit has been reached."}},
		{"limit lifted: eligible again, and runs", next(base(true, "[u:PBS_GENERIC=5]"), "1", "1:ncpus=2"),
			[]string{"eligible 2", "run 2 n1"}},
		{"no limit set: eligible again, waits for cpus", next(base(true, ""), "1", "1:ncpus=4"),
			[]string{"eligible 2", "comment 2 " + cNodes}},
		{"eligible_time_enable off", next(base(false, "[p:proj1=1]"), "", "1:ncpus=2"),
			[]string{"comment 2 Server job limit reached for project proj1"}},
	} {
		if got := outcome(tt.w.run(Inputs{})); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestFormulaEligibleTime: the formula's eligible_time is the eligible
// time the job accrued while the server keeps it (OpenPBS's), else the
// time since its etime.
func TestFormulaEligibleTime(t *testing.T) {
	t.Parallel()
	f, err := formula.Parse("eligible_time")
	if err != nil {
		t.Fatal(err)
	}
	in := Inputs{Settings: Settings{Formula: f}}
	// One cpu: the first job in the formula's order runs. Job 1 became
	// eligible first (etime) but accrued less eligible time.
	w := newWorld().node("n1", 1, "free").
		job(1, "Q", "workq", "u", "1:ncpus=1", a("etime", "1000"), a("eligible_time", "00:00:30"), a("accrue_type", "2")).
		job(2, "Q", "workq", "u", "1:ncpus=1", a("etime", "2000"), a("eligible_time", "00:10:00"), a("accrue_type", "2"))
	if got := outcome(w.run(in)); !reflect.DeepEqual(got, []string{"run 1 n1", "comment 2 " + cNodes}) {
		t.Errorf("eligible_time_enable off: %q, want job 1 first (the earlier etime)", got)
	}
	w.server.Attrs = append(w.server.Attrs, proto.Attr{Name: "eligible_time_enable", Value: "True"})
	if got := outcome(w.run(in)); !reflect.DeepEqual(got, []string{"run 2 n1", "comment 1 " + cNodes}) {
		t.Errorf("eligible_time_enable on: %q, want job 2 first (more eligible time)", got)
	}
}
