package starts

import (
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/resc"
)

// The walltime a start sets: the scheduler's choice within the bounds,
// max_walltime for a start that names none (qrun), nothing for others.
func TestChosenWalltime(t *testing.T) {
	stf := model.Resources{}.Set("min_walltime", "00:10:00").Set("max_walltime", "10:00:00")
	for _, tc := range []struct {
		name  string
		rl    model.Resources
		asked int64
		want  string
		fails bool
	}{
		{name: "within the bounds", rl: stf, asked: 1799, want: "00:29:59"},
		{name: "min", rl: stf, asked: 600, want: "00:10:00"},
		{name: "max", rl: stf, asked: 36000, want: "10:00:00"},
		{name: "below min", rl: stf, asked: 599, fails: true},
		{name: "above max", rl: stf, asked: 36001, fails: true},
		{name: "none asked (qrun): max_walltime", rl: stf, want: "10:00:00"},
		{name: "none asked, no max: none", rl: model.Resources{}.Set("min_walltime", "00:10:00")},
		{name: "no max: up to 5 years", rl: model.Resources{}.Set("min_walltime", "00:10:00"), asked: 100000, want: resc.FormatDuration(100000)},
		{name: "a plain job keeps its own", rl: model.Resources{}.Set("walltime", "01:00:00")},
		{name: "a plain job is given none", rl: model.Resources{}.Set("walltime", "01:00:00"), asked: 600, fails: true},
		{name: "a started shrink-to-fit job keeps its own", rl: stf.Clone().Set("walltime", "00:30:00"), asked: 600, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ChosenWalltime(&model.Job{ResourceList: tc.rl}, tc.asked)
			if (err != nil) != tc.fails || got != tc.want {
				t.Fatalf("ChosenWalltime = %q, %v; want %q (fails %v)", got, err, tc.want, tc.fails)
			}
		})
	}
}
