package schedpriv

import (
	"strings"
	"testing"
)

func TestParsePreemptPrio(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string // String() of the result; "" when refused
		errPart string
	}{
		{"express_queue, normal_jobs", "express_queue, normal_jobs", ""},
		{"express_queue,normal_jobs", "express_queue, normal_jobs", ""},
		{" starving_jobs + express_queue , fairshare, normal_jobs", "express_queue+starving_jobs, fairshare, normal_jobs", ""},
		{"queue_softlimits, server_softlimits", "queue_softlimits, server_softlimits", ""},
		{"express_queue, , normal_jobs", "", "empty level"},
		{"express_queue,", "", "empty level"},
		{"expres_queue, normal_jobs", "", "did you mean express_queue"},
		{"express_queue+express_queue", "", "twice"},
		{"express_queue, express_queue", "", "listed twice"},
		{"normal_jobs+starving_jobs", "", "cannot be combined"},
		{"", "", "empty level"},
	}
	for _, tt := range tests {
		p, err := ParsePreemptPrio(tt.in)
		if tt.want == "" {
			if err == nil || !strings.Contains(err.Error(), tt.errPart) {
				t.Errorf("ParsePreemptPrio(%q) = %v, %v; want an error with %q", tt.in, p, err, tt.errPart)
			}
			continue
		}
		if err != nil || p.String() != tt.want {
			t.Errorf("ParsePreemptPrio(%q) = %q, %v; want %q", tt.in, p.String(), err, tt.want)
		}
	}
}

// A job's level is OpenPBS's: the level with the most of its classes,
// then the first listed; a job of no listed level is normal; a normal
// job when normal_jobs is not listed is below every level.
func TestPreemptPrioLevel(t *testing.T) {
	t.Parallel()
	p, err := ParsePreemptPrio("express_queue, starving_jobs+fairshare, starving_jobs, normal_jobs, fairshare")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		has  PreemptClass
		want int
	}{
		{PreemptExpress, 0},
		{PreemptExpress | PreemptStarving, 0},
		{PreemptStarving | PreemptFairshare, 1}, // two classes beat the earlier one-class level
		{PreemptStarving, 2},
		{0, 3},
		{PreemptNormal, 3},
		{PreemptFairshare, 4},
		{PreemptQueueSoft, 3}, // no level of its own: normal
	}
	for _, tt := range tests {
		if got := p.Level(tt.has); got != tt.want {
			t.Errorf("Level(%s) = %d, want %d", tt.has, got, tt.want)
		}
	}
	noNormal := PreemptPrio{PreemptExpress}
	if got := noNormal.Level(PreemptNormal); got != 1 {
		t.Errorf("a normal job without normal_jobs listed: level %d, want 1 (below all)", got)
	}
}

func TestParsePreemptOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string
		errPart string
	}{
		{"SCR", "SCR", ""},
		{"SCR 80 SC 50 S", "SCR 80 SC 50 S", ""},
		{"  R ", "R", ""},
		{"SC 50", "", "no methods after it"},
		{"SCR 50 SC 80 S", "", "go down"},
		{"SXR", "", "is not a method"},
		{"D", "", "is not a method"},
		{"SS", "", "twice"},
		{"80 S", "", "is not a method"},
		{"S 100 C", "", "from 1 to 99"},
		{"S 0 C", "", "from 1 to 99"},
		{"", "", "empty"},
	}
	for _, tt := range tests {
		o, err := ParsePreemptOrder(tt.in)
		if tt.want == "" {
			if err == nil || !strings.Contains(err.Error(), tt.errPart) {
				t.Errorf("ParsePreemptOrder(%q) = %v, %v; want an error with %q", tt.in, o, err, tt.errPart)
			}
			continue
		}
		if err != nil || o.String() != tt.want {
			t.Errorf("ParsePreemptOrder(%q) = %q, %v; want %q", tt.in, o.String(), err, tt.want)
		}
	}
	o, _ := ParsePreemptOrder("SCR 80 SC 50 S")
	for left, want := range map[int]string{100: "SCR", 81: "SCR", 80: "SC", 51: "SC", 50: "S", 1: "S", 0: "S"} {
		if got := o.Methods(left); got != want {
			t.Errorf("Methods(%d%%) = %q, want %q", left, got, want)
		}
	}
}

// The PBS Pro lines load, and preemption stays off until preemptive_sched
// turns it on.
func TestPreemptConfig(t *testing.T) {
	t.Parallel()
	c := parseConfigString(t, "preempt_queue_prio: 150\npreempt_prio: \"express_queue, normal_jobs\"\npreempt_order: \"SCR\"\npreempt_sort: min_time_since_start\n")
	if c.PreemptQueuePrio != 150 || c.PreemptPrio.String() != "express_queue, normal_jobs" || c.PreemptOrder.String() != "SCR" || c.PreemptSort != PreemptSortMinTimeSinceStart {
		t.Errorf("parsed %d %q %q %q", c.PreemptQueuePrio, c.PreemptPrio, c.PreemptOrder, c.PreemptSort)
	}
	if c.Prime.PreemptiveSched || len(c.Warnings) > 0 {
		t.Errorf("preemptive_sched %v, warnings %v", c.Prime.PreemptiveSched, c.Warnings)
	}
	c = parseConfigString(t, "preempt_queue_prio: 200\npreempt_prio: \"starving_jobs, express_queue\"\npreempt_order: \"S 50 R\"\npreemptive_sched: true non_prime\n")
	if c.PreemptQueuePrio != 200 || c.PreemptPrio[0] != PreemptStarving || c.PreemptOrder.Methods(10) != "R" || c.Prime.PreemptiveSched || !c.NonPrime.PreemptiveSched {
		t.Errorf("parsed %+v", c)
	}
	for _, bad := range []string{"preempt_queue_prio: high", "preempt_prio: express_queue, normal_jobs", "preempt_order: \"SCR 80\"", "preempt_sort: preempt_priority", "preempt_order: \"S\" prime"} {
		if _, err := ParseConfig(strings.NewReader(bad), "t"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzPreemptPrio(f *testing.F) {
	for _, s := range []string{"express_queue, normal_jobs", "starving_jobs+fairshare,normal_jobs", "a,,b", "+", "normal_jobs+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePreemptPrio(s)
		if err != nil {
			return
		}
		if len(p) == 0 || len(p) > MaxPreemptLevels {
			t.Fatalf("%d levels", len(p))
		}
		back, err := ParsePreemptPrio(p.String())
		if err != nil || back.String() != p.String() {
			t.Fatalf("round trip %q -> %q: %v", p, back, err)
		}
		for c := PreemptClass(0); c < 1<<6; c++ {
			if l := p.Level(c); l < 0 || l > len(p) {
				t.Fatalf("Level(%s) = %d", c, l)
			}
		}
	})
}

func FuzzPreemptOrder(f *testing.F) {
	for _, s := range []string{"SCR", "SCR 80 SC 50 S", "S 1 R", "R 99 C 98 S"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParsePreemptOrder(s)
		if err != nil {
			return
		}
		back, err := ParsePreemptOrder(o.String())
		if err != nil || back.String() != o.String() {
			t.Fatalf("round trip %q -> %q: %v", o, back, err)
		}
		for left := 0; left <= 100; left++ {
			m := o.Methods(left)
			if m == "" || strings.Trim(m, "SCR") != "" {
				t.Fatalf("Methods(%d) = %q", left, m)
			}
		}
	})
}
