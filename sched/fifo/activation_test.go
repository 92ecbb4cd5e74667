package fifo

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/core"
)

// fakeActivation answers from a table by job id (Run when absent) and
// records the candidates it saw.
type fakeActivation struct {
	says map[string]core.Status
	saw  []string
}

func (f *fakeActivation) Name() string { return "fake" }

func (f *fakeActivation) Activate(cx *Context, c Candidate) core.Status {
	id := strings.TrimSuffix(c.Job.ID, ".srv")
	bf := ""
	if c.Backfill {
		bf = " backfill"
	}
	f.saw = append(f.saw, id+" #"+strconv.Itoa(c.Index)+bf)
	return f.says[id]
}

var holdUntil = now.Add(15 * time.Minute)

func TestActivationOutcomes(t *testing.T) {
	t.Parallel()
	block := core.Status{Code: core.Block, Reason: "blocked by f"}
	keep := core.Status{Code: core.Keep, Reason: "kept by f"}
	notNow := core.Status{Code: core.NotNow, Reason: "not now by f"}
	hold := core.Status{Code: core.WaitUntil, Until: holdUntil, Reason: "held by f"}
	fail := core.Status{Code: core.Never, Reason: "failed by f"}
	two := func() *world { return newWorld().node("n1", 2, "free") }
	backfill := Inputs{Settings: Settings{Backfill: true}}
	// gap: job 2 cannot start and reserves n1 from when job 1 ends in an
	// hour; 3 and 4 (30 minutes) fit before that, in the backfill window.
	gap := func() *world {
		return newWorld().node("n1", 2, "free").job(1, "R", "workq", "u", "1:ncpus=1", r("Resource_List", "walltime", "01:00:00"), a("exec_vnode", "(n1:ncpus=1)"), a("stime", strconv.FormatInt(now.Unix(), 10))).
			job(2, "Q", "workq", "u", "1:ncpus=2").
			job(3, "Q", "workq", "u", "1:ncpus=1", r("Resource_List", "walltime", "00:30:00")).
			job(4, "Q", "workq", "u", "1:ncpus=1", r("Resource_List", "walltime", "00:30:00"))
	}
	tests := []struct {
		name string
		w    *world
		in   Inputs
		says map[string]core.Status
		want []string
		saw  []string
	}{
		{"exit 0 starts", two().job(1, "Q", "workq", "u", "1:ncpus=1"), Inputs{}, nil,
			[]string{"run 1 n1"}, []string{"1 #1"}},
		{"exit 1 blocks equal and lower priority, not higher", two().job(1, "Q", "workq", "u", "1:ncpus=1", a("Priority", "5")).
			job(2, "Q", "workq", "u", "1:ncpus=1", a("Priority", "5")).job(3, "Q", "workq", "u", "1:ncpus=1", a("Priority", "1")).
			job(4, "Q", "workq", "u", "1:ncpus=1", a("Priority", "9")),
			Inputs{}, map[string]core.Status{"1": block},
			[]string{"comment 1 blocked by f", "comment 2 " + cBlocked + "1.srv", "comment 3 " + cBlocked + "1.srv", "run 4 n1"}, []string{"1 #1", "4 #4"}},
		{"exit 2 keeps the resources from a lower job that would fit in them", two().job(1, "Q", "workq", "u", "1:ncpus=2").job(2, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{}, map[string]core.Status{"1": keep},
			[]string{"comment 1 kept by f", "comment 2 " + cNodes}, []string{"1 #1"}},
		{"a plain not-now releases them", two().job(1, "Q", "workq", "u", "1:ncpus=2").job(2, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{}, map[string]core.Status{"1": notNow},
			[]string{"comment 1 not now by f", "run 2 n1"}, []string{"1 #1", "2 #2"}},
		{"exit 3 holds and releases the resources", two().job(1, "Q", "workq", "u", "1:ncpus=2").job(2, "Q", "workq", "u", "1:ncpus=2"),
			Inputs{}, map[string]core.Status{"1": hold},
			[]string{"hold 1", "run 2 n1"}, []string{"1 #1", "2 #2"}},
		{"exit 4 fails", two().job(1, "Q", "workq", "u", "1:ncpus=2").job(2, "Q", "workq", "u", "1:ncpus=2"),
			Inputs{}, map[string]core.Status{"1": fail},
			[]string{"fail 1", "run 2 n1"}, []string{"1 #1", "2 #2"}},
		{"a backfill start needs exit 0: keep and block are only refusals there",
			gap(),
			backfill, map[string]core.Status{"3": keep},
			[]string{"reserve 2 n1 +1h0m0s", "comment 2 " + cNodes, "comment 3 kept by f", "run 4 n1"}, []string{"3 #2 backfill", "4 #3 backfill"}},
		{"block in a backfill window blocks nothing",
			gap(),
			backfill, map[string]core.Status{"3": block},
			[]string{"reserve 2 n1 +1h0m0s", "comment 2 " + cNodes, "comment 3 blocked by f", "run 4 n1"}, []string{"3 #2 backfill", "4 #3 backfill"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fa := &fakeActivation{says: tc.says}
			p := DefaultPipeline()
			p.Activations = []Activation{fa}
			plan := p.Schedule(sched.NewWorld(now, tc.w.server, tc.w.queues, tc.w.nodes, tc.w.jobs), tc.in)
			got := outcome(plan)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("decisions\n got %q\nwant %q", got, tc.want)
			}
			if !reflect.DeepEqual(fa.saw, tc.saw) {
				t.Errorf("activation saw %q, want %q", fa.saw, tc.saw)
			}
			for _, d := range plan.Decisions() {
				if d.Kind == core.DecideHold && (!d.Until.Equal(holdUntil) || d.Holds != "" || d.Text != "Not Running: held by f") {
					t.Errorf("hold decision %+v", d)
				}
				if d.Kind == core.DecideFail && d.Text != "Not Running: failed by f" {
					t.Errorf("fail decision %+v", d)
				}
			}
		})
	}
}
