package fifo

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/sched/fairshare"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// The classic scheduler's quirks (reference, "How to read the quirks"),
// each behaving the intended way.
func TestQuirks(t *testing.T) {
	t.Parallel()
	tree := func(text string) *schedpriv.Tree {
		tr, err := schedpriv.ParseResourceGroup(strings.NewReader(text), "rg", 1)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tests := []struct {
		name string
		w    *world
		in   Inputs
		want []string
	}{
		{"strict fifo never runs jobs from stopped queues (the classic one tried them)",
			newWorld().queue("off", "Execution", false).node("n1", 2, "free").
				job(1, "Q", "off", "u", "1:ncpus=1").job(2, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{Settings: Settings{StrictFIFO: true}}, []string{"comment 1 " + cQueueNotStarted, "run 2 n1"}},
		{"a starving job stops blocking others once it has started",
			newWorld().node("n1", 4, "free").
				job(1, "Q", "workq", "u", "1:ncpus=2").job(2, "Q", "workq", "u", "1:ncpus=1").job(3, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{Settings: Settings{HelpStarving: true, MaxStarve: time.Second}}, []string{"run 1 n1", "run 2 n1", "run 3 n1"}},
		{"sort_by fair_share is a valid, stable ordering: higher share first, ties keep their order",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "lo", "1:ncpus=1").job(2, "Q", "workq", "hi", "1:ncpus=1").job(3, "Q", "workq", "lo", "1:ncpus=1").job(4, "Q", "workq", "hi", "1:ncpus=1"),
			Inputs{Settings: Settings{Sort: []SortKey{{FairShare: true, Descending: true}}},
				Standing: fairshare.NewStanding(tree("hi 1 root 3\nlo 2 root 1\n"), nil)},
			[]string{"run 2 n1", "comment 4 " + cNodes, "comment 1 " + cNodes, "comment 3 " + cNodes}},
		{"fair_share orders by standing: the user below share first",
			newWorld().node("n1", 1, "free").
				job(1, "Q", "workq", "heavy", "1:ncpus=1").job(2, "Q", "workq", "light", "1:ncpus=1"),
			Inputs{Settings: Settings{FairShare: true},
				Standing: fairshare.NewStanding(tree("heavy 1 root 1\nlight 2 root 1\n"), schedpriv.Usage{"heavy": 1e6})},
			[]string{"run 2 n1", "comment 1 " + cNodes}},
	}
	for _, tt := range tests {
		got := outcome(tt.w.run(tt.in))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
