package fifo

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/sched/fairshare"
	"github.com/gopbs/gopbs/sched/formula"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// job_sort_formula, worked by hand. One node of one cpu: the first job in
// the cycle's order runs, the others say why not, in order.
func TestJobSortFormula(t *testing.T) {
	t.Parallel()
	parse := func(text string) *formula.Expr {
		f, err := formula.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	// Two users with one share each (and none for unknown); heavy has used
	// the machine, light not: heavy's fairshare_factor is 2^-(1/0.5) =
	// 0.25 (its tree usage is all the usage, near enough), light's 2^-0 =
	// 1.
	standing := func() *fairshare.Standing {
		tree, err := schedpriv.ParseResourceGroup(strings.NewReader("heavy 1 root 1\nlight 2 root 1\n"), "rg", 0)
		if err != nil {
			t.Fatal(err)
		}
		return fairshare.NewStanding(tree, schedpriv.Usage{"heavy": 1e9})
	}
	waited := func(d time.Duration) []proto.Attr {
		at := strconv.FormatInt(now.Add(-d).Unix(), 10)
		return []proto.Attr{a("qtime", at), a("etime", at)}
	}
	agedFS := parse("eligible_time + 3600 * fairshare_factor")
	tests := []struct {
		name string
		w    *world
		in   Inputs
		want []string
	}{
		{"highest value first",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "u", "1:ncpus=1", a("Priority", "1")).
				job(2, "Q", "workq", "u", "1:ncpus=1", a("Priority", "5")).
				job(3, "Q", "workq", "u", "1:ncpus=1", a("Priority", "3")),
			Inputs{Settings: Settings{Formula: parse("job_priority * 2")}},
			[]string{"run 2 n1", "comment 3 " + cNodes, "comment 1 " + cNodes}},
		// light's job, queued 100 s: 100 + 3600 * 1 = 3700; heavy's, queued
		// 1000 s: 1000 + 3600 * 0.25 = 1900.
		{"fair share worth an hour: the light user's newer job first",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "heavy", "1:ncpus=1", waited(1000*time.Second)...).
				job(2, "Q", "workq", "light", "1:ncpus=1", waited(100*time.Second)...),
			Inputs{Settings: Settings{Formula: agedFS, FairShare: true}, Standing: standing()},
			[]string{"run 2 n1", "comment 1 " + cNodes}},
		// heavy's job queued 3000 s: 3000 + 900 = 3900 > 3700: waiting
		// outweighs the fair-share term, which strict fair share never lets
		// happen.
		{"but not past a job that waited longer than the term is worth",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "heavy", "1:ncpus=1", waited(3000*time.Second)...).
				job(2, "Q", "workq", "light", "1:ncpus=1", waited(100*time.Second)...),
			Inputs{Settings: Settings{Formula: agedFS, FairShare: true}, Standing: standing()},
			[]string{"run 1 n1", "comment 2 " + cNodes}},
		{"strict fair share, for comparison",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "heavy", "1:ncpus=1", waited(3000*time.Second)...).
				job(2, "Q", "workq", "light", "1:ncpus=1", waited(100*time.Second)...),
			Inputs{Settings: Settings{FairShare: true}, Standing: standing()},
			[]string{"run 2 n1", "comment 1 " + cNodes}},
		{"equal values: fair share orders them",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "heavy", "1:ncpus=1").job(2, "Q", "workq", "light", "1:ncpus=1").job(3, "Q", "workq", "heavy", "1:ncpus=1", a("Priority", "1")),
			Inputs{Settings: Settings{Formula: parse("job_priority"), FairShare: true}, Standing: standing()},
			[]string{"run 3 n1", "comment 2 " + cNodes, "comment 1 " + cNodes}},
		{"equal values without fair share: the sort keys order them",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "u", "1:ncpus=1").job(2, "Q", "workq", "u", "1:ncpus=1", a("Priority", "7")).job(3, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{Settings: Settings{Formula: parse("queue_priority"), Sort: []SortKey{{Priority: true, Descending: true}}}},
			[]string{"run 2 n1", "comment 1 " + cNodes, "comment 3 " + cNodes}},
		// 1/(p-2): job 1 (p 1) -1, job 2 (p 2) no value: 0, job 3 (p 3) 1.
		{"a value that is not a number counts as 0",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "u", "1:ncpus=1", a("Priority", "1")).
				job(2, "Q", "workq", "u", "1:ncpus=1", a("Priority", "2")).
				job(3, "Q", "workq", "u", "1:ncpus=1", a("Priority", "3")),
			Inputs{Settings: Settings{Formula: parse("1 / (job_priority - 2)")}},
			[]string{"run 3 n1", "comment 2 " + cNodes, "comment 1 " + cNodes}},
		// job 1: 1gb is 1048576 kb, /1024 = 1024, minus 60 min = 964;
		// job 2: 512 - 10 = 502; job 3 asks for neither: 0.
		{"resources: sizes in kilobytes, times in seconds, missing ones 0",
			newWorld().node("n1", 1, "free").
				job(3, "Q", "workq", "u", "1:ncpus=1").
				job(2, "Q", "workq", "u", "1:ncpus=1", r("Resource_List", "mem", "512mb"), r("Resource_List", "walltime", "00:10:00")).
				job(1, "Q", "workq", "u", "1:ncpus=1", r("Resource_List", "mem", "1gb"), r("Resource_List", "walltime", "01:00:00")),
			Inputs{Settings: Settings{Formula: parse("mem / 1024 - walltime / 60")}},
			[]string{"run 1 n1", "comment 2 " + cNodes, "comment 3 " + cNodes}},
		{"queue priority",
			newWorld().queue("hi", "Execution", true, a("Priority", "10")).node("n1", 1, "free").
				job(1, "Q", "workq", "u", "1:ncpus=1").job(2, "Q", "hi", "u", "1:ncpus=1"),
			Inputs{Settings: Settings{Formula: parse("queue_priority")}},
			[]string{"run 2 n1", "comment 1 " + cNodes}},
		{"a starving job still goes first",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "u", "1:ncpus=1", waited(2*time.Hour)...).
				job(2, "Q", "workq", "u", "1:ncpus=1", append(waited(time.Minute), a("Priority", "9"))...),
			Inputs{Settings: Settings{Formula: parse("job_priority"), HelpStarving: true, MaxStarve: time.Hour}},
			[]string{"run 1 n1", "comment 2 " + cNodes}},
		{"strict fifo keeps the formula's order (OpenPBS's strict_ordering)",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "u", "1:ncpus=1").job(2, "Q", "workq", "u", "1:ncpus=1", a("Priority", "9")),
			Inputs{Settings: Settings{Formula: parse("job_priority"), StrictFIFO: true}},
			[]string{"run 2 n1", "comment 1 " + cNodes}},
	}
	for _, tt := range tests {
		if got := outcome(tt.w.run(tt.in)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// With backfilling, the reservation goes to the first blocked job in the
// formula's order: two cpus, one busy for 90 s; the heavy user's 2-cpu job
// has waited longest and is first, so it reserves; light's 1-cpu job
// starts only in a gap that cannot delay it.
func TestJobSortFormulaBackfill(t *testing.T) {
	t.Parallel()
	f, err := formula.Parse("eligible_time + 3600 * fairshare_factor")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := schedpriv.ParseResourceGroup(strings.NewReader("heavy 1 root 1\nlight 2 root 1\n"), "rg", 0)
	if err != nil {
		t.Fatal(err)
	}
	wall := func(w string) proto.Attr { return r("Resource_List", "walltime", w) }
	at := func(d time.Duration) proto.Attr { return a("qtime", strconv.FormatInt(now.Add(-d).Unix(), 10)) }
	w := newWorld().node("n1", 2, "free", r("resources_assigned", "ncpus", "1")).
		job(1, "R", "workq", "u", "1:ncpus=1", r("Resource_List", "walltime", "00:01:30"), a("stime", strconv.FormatInt(now.Unix(), 10)), a("exec_vnode", "(n1:ncpus=1)")).
		job(2, "Q", "workq", "heavy", "1:ncpus=2", wall("00:10:00"), at(5*time.Hour)).
		job(3, "Q", "workq", "light", "1:ncpus=1", wall("00:10:00"), at(time.Minute)).
		job(4, "Q", "workq", "light", "1:ncpus=1", wall("00:01:00"), at(time.Minute))
	in := Inputs{Settings: Settings{Formula: f, FairShare: true, Backfill: true, BackfillDepth: 1000},
		Standing: fairshare.NewStanding(tree, schedpriv.Usage{"heavy": 1e9})}
	want := []string{"reserve 2 n1 +1m30s", "comment 2 " + cNodes, "comment 3 " + cTopJob, "run 4 n1"}
	if got := outcome(w.run(in)); !reflect.DeepEqual(got, want) {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
}
