package admit

import (
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

func stfList(pairs ...string) model.Resources {
	var rl model.Resources
	for i := 0; i+1 < len(pairs); i += 2 {
		rl = rl.Set(pairs[i], pairs[i+1])
	}
	return rl
}

// OpenPBS's refusals of shrink-to-fit requests at qsub and qalter.
func TestCheckShrinkToFit(t *testing.T) {
	for _, tc := range []struct {
		name           string
		rl             model.Resources
		array, started bool
		want           proto.Code
	}{
		{name: "min and max", rl: stfList("min_walltime", "00:10:00", "max_walltime", "10:00:00")},
		{name: "min alone: no upper bound", rl: stfList("min_walltime", "00:10:00")},
		{name: "min equals max", rl: stfList("min_walltime", "600", "max_walltime", "00:10:00")},
		{name: "a plain job", rl: stfList("walltime", "01:00:00")},
		{name: "max without min", rl: stfList("max_walltime", "10:00:00"), want: proto.PBSE_MAX_NO_MINWT},
		{name: "min greater than max", rl: stfList("min_walltime", "10:00:00", "max_walltime", "00:10:00"), want: proto.PBSE_MIN_GT_MAXWT},
		{name: "a job array", rl: stfList("min_walltime", "00:10:00"), array: true, want: proto.PBSE_NOSTF_JOBARRAY},
		{name: "with soft_walltime", rl: stfList("min_walltime", "00:10:00", "soft_walltime", "00:20:00"), want: proto.PBSE_SOFTWT_STF},
		{name: "with walltime", rl: stfList("min_walltime", "00:10:00", "walltime", "01:00:00"), want: proto.PBSE_BADATVAL},
		{name: "a started job has the walltime its start chose", rl: stfList("min_walltime", "00:10:00", "walltime", "01:00:00"), started: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckShrinkToFit(resc.NewTable(nil), tc.rl, tc.array, tc.started)
			if got := proto.CodeOf(err); got != tc.want {
				t.Fatalf("code %d (%v), want %d", got, err, tc.want)
			}
			if err != nil && tc.want != proto.PBSE_BADATVAL && err.Error() != tc.want.Message() {
				t.Errorf("text %q, want OpenPBS's %q", err.Error(), tc.want.Message())
			}
		})
	}
}

// The limits that bound a shrink-to-fit job (OpenPBS's): resources_min.walltime
// its min_walltime, resources_max.walltime its max_walltime.
func TestSTFLimit(t *testing.T) {
	stf := stfList("min_walltime", "00:10:00", "max_walltime", "10:00:00")
	if v, ok := stfLimit(stf, "walltime", true); !ok || v != "10:00:00" {
		t.Errorf("max: %q %v", v, ok)
	}
	if v, ok := stfLimit(stf, "walltime", false); !ok || v != "00:10:00" {
		t.Errorf("min: %q %v", v, ok)
	}
	if v, ok := stfLimit(stfList("min_walltime", "00:10:00"), "walltime", true); !ok || v != "" {
		t.Errorf("no max: %q %v, want no value to compare", v, ok)
	}
	if _, ok := stfLimit(stf, "ncpus", true); ok {
		t.Error("ncpus is not a walltime limit")
	}
	if _, ok := stfLimit(stf.Clone().Set("walltime", "01:00:00"), "walltime", true); ok {
		t.Error("a started job's own walltime is limited as any job's")
	}
}
