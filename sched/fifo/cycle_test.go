package fifo

import (
	"slices"
	"testing"
)

// The cycle's stages and a job's stages run in the documented order
// (ARCHITECTURE.md, cycle.go), each named once: a stage moved, dropped or
// added shows here and in the docs together.
func TestStageOrder(t *testing.T) {
	t.Parallel()
	var cycleNames, jobNames []string
	for _, s := range cycleStages {
		cycleNames = append(cycleNames, s.Name())
	}
	for _, s := range jobStages {
		jobNames = append(jobNames, s.Name())
	}
	for _, tc := range []struct {
		list  string
		names []string
		want  []string
	}{
		{"cycle", cycleNames, []string{"dedicated", "reservations", "order", "prefilter", "grow", "jobs", "share"}},
		{"job", jobNames, []string{"resume", "gate", "check", "place", "start", "never", "preempt", "shrink", "reserve"}},
	} {
		if !slices.Equal(tc.names, tc.want) {
			t.Errorf("%s stages %v, want %v", tc.list, tc.names, tc.want)
		}
		seen := map[string]bool{}
		for _, n := range tc.names {
			if seen[n] {
				t.Errorf("%s stage %q named twice", tc.list, n)
			}
			seen[n] = true
		}
	}
}
