package core

import (
	"slices"
	"testing"
	"time"
)

// ChooseWalltime: the longest walltime in [lo, hi] that fits, for fits
// that hold up to a limit, changing just past the cuts.
func TestChooseWalltime(t *testing.T) {
	t.Parallel()
	m := time.Minute
	upTo := func(limit time.Duration) func(time.Duration) bool {
		return func(d time.Duration) bool { return d <= limit }
	}
	for _, tc := range []struct {
		name    string
		lo, hi  time.Duration
		cuts    []time.Duration
		limit   time.Duration // fits(d) is d <= limit
		want    time.Duration
		wantOK  bool
		maxAsks int
	}{
		{name: "nothing ahead: max", lo: 10 * m, hi: 600 * m, limit: 1000 * m, want: 600 * m, wantOK: true, maxAsks: 2},
		{name: "a hold in 30 minutes: just before it", lo: 10 * m, hi: 600 * m, cuts: []time.Duration{30 * m}, limit: 30 * m, want: 30 * m, wantOK: true},
		{name: "the nearest of several holds", lo: 10 * m, hi: 600 * m, cuts: []time.Duration{300 * m, 45 * m, 120 * m}, limit: 45 * m, want: 45 * m, wantOK: true},
		{name: "a hold that does not touch its nodes", lo: 10 * m, hi: 600 * m, cuts: []time.Duration{45 * m, 120 * m}, limit: 120 * m, want: 120 * m, wantOK: true},
		{name: "min does not fit: waits", lo: 10 * m, hi: 600 * m, cuts: []time.Duration{5 * m}, limit: 5 * m, wantOK: false},
		{name: "min exactly fits", lo: 10 * m, hi: 600 * m, cuts: []time.Duration{10 * m}, limit: 10 * m, want: 10 * m, wantOK: true},
		{name: "cuts outside the range are ignored", lo: 10 * m, hi: 60 * m, cuts: []time.Duration{5 * m, 60 * m, 90 * m}, limit: 1000 * m, want: 60 * m, wantOK: true},
		{name: "min equals max", lo: 10 * m, hi: 10 * m, limit: 1000 * m, want: 10 * m, wantOK: true},
		{name: "max below min (a window that ends too soon)", lo: 10 * m, hi: 5 * m, limit: 1000 * m, wantOK: false},
		{name: "whole seconds", lo: 90 * time.Second, hi: 10*m + 500*time.Millisecond, limit: 1000 * m, want: 10 * m, wantOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asks := 0
			fits := func(d time.Duration) bool { asks++; return upTo(tc.limit)(d) }
			got, ok := ChooseWalltime(tc.lo, tc.hi, tc.cuts, fits)
			if ok != tc.wantOK || ok && got != tc.want {
				t.Fatalf("ChooseWalltime = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
			if tc.maxAsks > 0 && asks > tc.maxAsks {
				t.Errorf("asked fits %d times, want at most %d", asks, tc.maxAsks)
			}
		})
	}
}

// FitWalltime on a calendar: a shrink-to-fit job placed now ends where
// the next hold on its nodes begins.
func TestCalendarFitWalltime(t *testing.T) {
	t.Parallel()
	sec := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	stf := func(id, sel string, lo, hi time.Duration) *Job {
		j := job(id, sel, 0)
		j.MinWalltime, j.MaxWalltime = lo, hi
		return j
	}
	world := func() *World {
		// n1 is held by A for 100 s; n2 is free.
		a := running(job("A", "1:ncpus=2", 100*time.Second), t0, cpus("n1", "2"))
		return NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}}, []*Node{node("n1", 2), node("n2", 2)}, []*Job{a})
	}
	for _, tc := range []struct {
		name   string
		setup  func(c *Calendar)
		job    *Job
		ignore bool // ignoreBlocks
		want   time.Duration
		where  []string
		wantOK bool
	}{
		{name: "nothing ahead: its max_walltime", job: stf("S", "1:ncpus=1", 10*time.Second, time.Hour), want: time.Hour, where: []string{"n2"}, wantOK: true},
		{
			name:  "a reservation on the free node in 600 s: 600 s",
			setup: func(c *Calendar) { c.Add([]Chunk{cpus("n2", "2")}, sec(600), sec(1200)) },
			job:   stf("S", "1:ncpus=1", 10*time.Second, time.Hour), want: 600 * time.Second, where: []string{"n2"}, wantOK: true,
		},
		{
			name:  "the reservation leaves room beside it: no shrink",
			setup: func(c *Calendar) { c.Add([]Chunk{cpus("n2", "1")}, sec(600), sec(1200)) },
			job:   stf("S", "1:ncpus=1", 10*time.Second, time.Hour), want: time.Hour, where: []string{"n2"}, wantOK: true,
		},
		{
			name:  "min_walltime past the reservation: does not fit",
			setup: func(c *Calendar) { c.Add([]Chunk{cpus("n2", "2")}, sec(600), sec(1200)) },
			job:   stf("S", "1:ncpus=1", 900*time.Second, time.Hour), wantOK: false,
		},
		{
			name:  "dedicated time in 300 s",
			setup: func(c *Calendar) { c.Block(sec(300), sec(3000)) },
			job:   stf("S", "1:ncpus=1", 10*time.Second, time.Hour), want: 300 * time.Second, where: []string{"n2"}, wantOK: true,
		},
		{
			name:  "dedicated time ignored (a dedicated queue's job)",
			setup: func(c *Calendar) { c.Block(sec(300), sec(3000)) },
			job:   stf("S", "1:ncpus=1", 10*time.Second, time.Hour), ignore: true, want: time.Hour, where: []string{"n2"}, wantOK: true,
		},
		{
			name: "a top job planned on both nodes at 100 s",
			setup: func(c *Calendar) {
				c.Reserve(job("T", "2:ncpus=2", time.Hour), sec(100), []Chunk{cpus("n1", "2"), cpus("n2", "2")})
			},
			job: stf("S", "1:ncpus=1", 60*time.Second, time.Hour), want: 100 * time.Second, where: []string{"n2"}, wantOK: true,
		},
		{
			name: "the nearer of two holds",
			setup: func(c *Calendar) {
				c.Add([]Chunk{cpus("n2", "2")}, sec(2000), sec(2100))
				c.Add([]Chunk{cpus("n2", "1")}, sec(700), sec(800))
				c.Add([]Chunk{cpus("n2", "1")}, sec(650), sec(800))
			},
			job: stf("S", "1:ncpus=1", 10*time.Second, time.Hour), want: 700 * time.Second, where: []string{"n2"}, wantOK: true,
		},
		{name: "no room now at all", job: stf("S", "2:ncpus=2", 10*time.Second, time.Hour), wantOK: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCalendar(world())
			if tc.setup != nil {
				tc.setup(c)
			}
			got, where, ok := c.FitWalltime(tc.job, tc.job.MinWalltime, tc.job.MaxWalltime, nil, tc.ignore)
			if ok != tc.wantOK || ok && got != tc.want {
				t.Fatalf("FitWalltime = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
			if ok && !slices.Equal(nodesOf(where), tc.where) {
				t.Errorf("where = %v, want %v", nodesOf(where), tc.where)
			}
		})
	}
}

// Bounds: max_walltime, else resources_max.walltime, else 5 years; never
// past until.
func TestCalendarBounds(t *testing.T) {
	t.Parallel()
	w := NewWorld(t0, &Server{Limits: NoLimits, MaxWalltime: 10 * time.Hour}, []*Queue{{Name: "workq", Execution: true}, {Name: "short", Execution: true, MaxWalltime: time.Hour}}, []*Node{node("n1", 2)}, nil)
	c := NewCalendar(w)
	j := job("S", "1:ncpus=1", 0)
	j.MinWalltime = time.Minute
	for _, tc := range []struct {
		name  string
		queue string
		max   time.Duration
		until time.Time
		want  time.Duration
	}{
		{name: "its max_walltime", queue: "workq", max: 2 * time.Hour, want: 2 * time.Hour},
		{name: "none: the server's resources_max.walltime", queue: "workq", want: 10 * time.Hour},
		{name: "the queue's, lower", queue: "short", max: 2 * time.Hour, want: time.Hour},
		{name: "until the end of dedicated time", queue: "workq", max: 2 * time.Hour, until: t0.Add(30 * time.Minute), want: 30 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j.Queue, j.MaxWalltime = tc.queue, tc.max
			if lo, hi := c.Bounds(j, tc.until); lo != time.Minute || hi != tc.want {
				t.Errorf("Bounds = %v, %v; want 1m, %v", lo, hi, tc.want)
			}
		})
	}
	w2 := NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}}, []*Node{node("n1", 2)}, nil)
	j.Queue, j.MaxWalltime = "workq", 0
	if _, hi := NewCalendar(w2).Bounds(j, time.Time{}); hi != DefaultMaxWalltime {
		t.Errorf("no bound anywhere: %v, want %v", hi, DefaultMaxWalltime)
	}
}
