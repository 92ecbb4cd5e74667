package fairshare

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/sched/core"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

func job(id, owner string, state core.JobState, cpu time.Duration) *core.Job {
	return &core.Job{ID: id, Owner: owner, State: state, UsedCPU: cpu}
}

func world(now time.Time, jobs []*core.Job, ended ...*core.Job) *core.World {
	w := core.NewWorld(now, nil, nil, nil, jobs)
	w.Ended = ended
	return w
}

func TestLedgerCountsEachSecondOnce(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_000_000, 0)
	l := NewLedger(nil)
	steps := []struct {
		name  string
		w     *core.World
		alice float64
		bob   float64
		jobs  int // followed afterwards
	}{
		{"two running jobs", world(t0, []*core.Job{job("1.s", "alice", core.JobRunning, 10*time.Second), job("2.s", "bob", core.JobRunning, 5*time.Second)}), 10, 5, 2},
		{"seen again: only the increase", world(t0, []*core.Job{job("1.s", "alice", core.JobRunning, 25*time.Second), job("2.s", "bob", core.JobRunning, 5*time.Second)}), 25, 5, 2},
		{"1 ended between cycles: its last seconds", world(t0, []*core.Job{job("2.s", "bob", core.JobRunning, 7*time.Second)}, job("1.s", "alice", core.JobFinished, 31*time.Second)), 31, 7, 1},
		{"the ended job is not counted again", world(t0, []*core.Job{job("2.s", "bob", core.JobRunning, 7*time.Second)}, job("1.s", "alice", core.JobFinished, 31*time.Second)), 31, 7, 1},
		{"2 requeued: no longer followed", world(t0, []*core.Job{job("2.s", "bob", core.JobQueued, 0)}), 31, 7, 0},
		{"2 runs again: the new run counts from zero", world(t0, []*core.Job{job("2.s", "bob", core.JobRunning, 3*time.Second)}), 31, 10, 1},
		{"queued jobs are not counted", world(t0, []*core.Job{job("2.s", "bob", core.JobRunning, 3*time.Second), job("3.s", "carol", core.JobQueued, 9*time.Second)}), 31, 10, 1},
	}
	for _, st := range steps {
		l.Observe(st.w)
		u := l.Usage()
		if u["alice"] != st.alice || u["bob"] != st.bob || len(l.Following()) != st.jobs {
			t.Errorf("%s: alice %v bob %v following %v; want %v %v %d", st.name, u["alice"], u["bob"], l.Following(), st.alice, st.bob, st.jobs)
		}
	}
	if _, ok := l.Usage()["carol"]; ok {
		t.Error("carol has usage from a queued job")
	}
}

// A restarted scheduler starts from the saved state and counts on from
// where the saved one stopped.
func TestLedgerAcrossRestart(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_000_000, 0)
	l := NewLedger(nil)
	l.Observe(world(t0, []*core.Job{job("1.s", "alice", core.JobRunning, 100*time.Second)}))
	saved, changed := l.State()
	if !changed {
		t.Error("State should report a change")
	}
	if _, again := l.State(); again {
		t.Error("State reports a change twice")
	}
	var buf strings.Builder
	if err := schedpriv.Encode(&buf, saved); err != nil {
		t.Fatal(err)
	}
	back, err := schedpriv.Decode(strings.NewReader(buf.String()), "usage")
	if err != nil {
		t.Fatal(err)
	}
	l2 := NewLedger(back)
	l2.Observe(world(t0, []*core.Job{job("1.s", "alice", core.JobRunning, 130*time.Second)}))
	if got := l2.Usage()["alice"]; got != 130 {
		t.Errorf("after restart alice = %v, want 130 (100 before, 30 since)", got)
	}
}

func TestLedgerDecay(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_000_000, 0)
	day := 24 * time.Hour
	l := NewLedger(&schedpriv.UsageState{Entities: schedpriv.Usage{"alice": 800}})
	for _, st := range []struct {
		at   time.Duration
		want float64
	}{
		{0, 800},                   // the first call starts the clock
		{day - time.Second, 800},   // not a whole half-life yet
		{day, 400},                 // one
		{3*day + time.Hour, 100},   // two more at once
		{4*day - time.Second, 100}, // the clock kept its phase
		{4 * day, 50},
	} {
		l.Decay(t0.Add(st.at), day, 0.5)
		if got := l.Usage()["alice"]; got != st.want {
			t.Errorf("at +%v: %v, want %v", st.at, got, st.want)
		}
	}
	l.Decay(t0.Add(100*day), 0, 0.5) // half_life 0: never
	if got := l.Usage()["alice"]; got != 50 {
		t.Errorf("half_life 0 decayed: %v", got)
	}
}

func fixtureTree(t *testing.T, unknown int) *schedpriv.Tree {
	t.Helper()
	f, err := os.Open("../../../shared/fixtures/sched_priv/resource_group")
	if err != nil {
		t.Skip("fixtures not found:", err)
	}
	defer f.Close()
	tree, err := schedpriv.ParseResourceGroup(f, "resource_group", unknown)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// The reference's worked example (§2.7): the sample tree with
// unknown_shares 10, and no usage: every factor is 1.
func TestStandingPercentages(t *testing.T) {
	t.Parallel()
	s := NewStanding(fixtureTree(t, 10), nil)
	for name, want := range map[string]float64{"unknown": 0.18182, "grp1": 0.18182, "usr1": 0.09091, "usr2": 0.04545, "usr6": 0.12121, "usr7": 0.18182} {
		g := s.Group(name)
		if math.Abs(g.Percentage-want) > 5e-6 {
			t.Errorf("%s: %.5f, want %.5f", name, g.Percentage, want)
		}
	}
}

func ids(js []*core.Job) string {
	var b []string
	for _, j := range js {
		b = append(b, j.ID)
	}
	return strings.Join(b, " ")
}

func TestStandingOrder(t *testing.T) {
	t.Parallel()
	flat := func(users ...string) *schedpriv.Tree {
		var b strings.Builder
		for i, u := range users {
			b.WriteString(u + " " + string(rune('1'+i)) + "0 root 10\n")
		}
		tree, err := schedpriv.ParseResourceGroup(strings.NewReader(b.String()), "rg", 1)
		if err != nil {
			t.Fatal(err)
		}
		return tree
	}
	nested := func() *schedpriv.Tree {
		tree, err := schedpriv.ParseResourceGroup(strings.NewReader("physics 10 root 50\nchem 20 root 50\nann 11 physics 1\nabe 12 physics 1\ncarl 21 chem 1\n"), "rg", 1)
		if err != nil {
			t.Fatal(err)
		}
		return tree
	}
	hour := func(*core.Job) float64 { return 3600 }
	jobs := func(spec ...string) []*core.Job {
		var out []*core.Job
		for i := 0; i+1 < len(spec); i += 2 {
			out = append(out, &core.Job{ID: spec[i], Owner: spec[i+1], State: core.JobQueued})
		}
		return out
	}
	tests := []struct {
		name  string
		tree  *schedpriv.Tree
		usage schedpriv.Usage
		jobs  []*core.Job
		want  string
	}{
		{"equal shares, one with large past usage goes after",
			flat("alice", "bob"), schedpriv.Usage{"alice": 1e6},
			jobs("a1", "alice", "a2", "alice", "b1", "bob"), "b1 a1 a2"},
		{"no usage: each pick charges its user, so users alternate",
			flat("alice", "bob"), nil,
			jobs("a1", "alice", "a2", "alice", "a3", "alice", "b1", "bob", "b2", "bob"), "a1 b1 a2 b2 a3"},
		{"far below share: several jobs before the other gets one",
			flat("alice", "bob"), schedpriv.Usage{"bob": 3*3600 - 10},
			jobs("b1", "bob", "a1", "alice", "a2", "alice", "a3", "alice", "a4", "alice"), "a1 a2 a3 b1 a4"},
		{"the tree: chem's one user against physics' two",
			nested(), schedpriv.Usage{"ann": 7200, "abe": 0, "carl": 3600},
			jobs("n1", "ann", "b1", "abe", "c1", "carl"), "c1 b1 n1"},
		{"a user called root is a user, not the tree's root",
			flat("alice"), schedpriv.Usage{"root": 1e6},
			jobs("r1", "root", "a1", "alice"), "a1 r1"},
		{"users not in the file share unknown",
			flat("alice"), schedpriv.Usage{"alice": 1e6},
			jobs("a1", "alice", "z1", "zed"), "z1 a1"},
	}
	for _, tt := range tests {
		s := NewStanding(tt.tree, tt.usage)
		if got := ids(s.Order(tt.jobs, hour)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// The job sort formula's fair-share terms, worked by hand. Usages are
// large so that the one unit every node starts with does not show at the
// tolerance used.
func TestStandingFormulaTerms(t *testing.T) {
	t.Parallel()
	parse := func(text string, unknown int) *schedpriv.Tree {
		tree, err := schedpriv.ParseResourceGroup(strings.NewReader(text), "rg", unknown)
		if err != nil {
			t.Fatal(err)
		}
		return tree
	}
	tests := []struct {
		name  string
		tree  *schedpriv.Tree
		usage schedpriv.Usage
		// user: tree usage, factor
		want map[string][2]float64
	}{
		{
			// Two users of the whole machine with equal shares: tree usage
			// is the fraction of all usage; on share (0.5 of usage for 0.5
			// of the machine) is a factor of 0.5.
			"flat", parse("alice 10 root 1\nbob 20 root 1\ncarol 30 root 2\n", 0),
			schedpriv.Usage{"alice": 3e6, "bob": 1e6},
			map[string][2]float64{
				"alice": {0.75, math.Pow(2, -0.75/0.25)},
				"bob":   {0.25, math.Pow(2, -0.25/0.25)},
				"carol": {0, 1}, // half the machine, nothing used
			},
		},
		{
			// physics used 3/4 of the machine for half of it: abe, who used
			// nothing, is taken halfway to physics' 0.75 (he is entitled
			// to half of physics), so he deserves less than carl, who used
			// exactly chem's share.
			"groups", parse("physics 10 root 50\nchem 20 root 50\nann 11 physics 1\nabe 12 physics 1\ncarl 21 chem 1\n", 0),
			schedpriv.Usage{"ann": 6e6, "carl": 2e6},
			map[string][2]float64{
				"ann":  {0.75, math.Pow(2, -0.75/0.25)},
				"abe":  {0.375, math.Pow(2, -0.375/0.25)},
				"carl": {0.25, math.Pow(2, -0.25/0.5)},
				"zed":  {0, 0}, // unknown has no shares: a factor of 0
			},
		},
	}
	for _, tt := range tests {
		s := NewStanding(tt.tree, tt.usage)
		for user, want := range tt.want {
			usage, factor := s.TreeUsage(s.Group(user)), s.FormulaFactor(user)
			if math.Abs(usage-want[0]) > 1e-5 || math.Abs(factor-want[1]) > 1e-5 {
				t.Errorf("%s: %s: tree usage %.6f factor %.6f, want %.6f %.6f", tt.name, user, usage, factor, want[0], want[1])
			}
		}
	}
}
