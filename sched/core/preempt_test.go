package core

import (
	"testing"
	"time"

	"github.com/gopbs/gopbs/resc"
)

// A running job released from the calendar frees what it held from now
// (a job that did not fit fits), and restoring it takes that back; so in
// a world whose Assigned is what its running jobs hold (a simulator's),
// whose spans are added only when first needed.
func TestCalendarReleaseRestore(t *testing.T) {
	t.Parallel()
	for _, held := range []bool{false, true} {
		a := running(job("A", "1:ncpus=2", 100*time.Second), t0, cpus("n1", "2"))
		b := running(job("B", "1:ncpus=2", 200*time.Second), t0, cpus("n2", "2"))
		n1, n2 := node("n1", 2), node("n2", 2)
		if held {
			n1.Assigned, n2.Assigned = Amounts{"ncpus": 2}, Amounts{"ncpus": 2}
		}
		w := NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}}, []*Node{n1, n2}, []*Job{a, b})
		w.HeldByRunning = held
		c := NewCalendar(w)
		x := job("X", "1:ncpus=2", 50*time.Second)
		if _, ok := c.PlaceAt(x, t0, nil, false); ok {
			t.Fatalf("held=%v: X fits on full nodes", held)
		}
		if !c.Release(a) {
			t.Fatalf("held=%v: A not released", held)
		}
		where, ok := c.PlaceAt(x, t0, nil, false)
		if !ok || where[0].Node != "n1" {
			t.Fatalf("held=%v: after A's release X at %v, %v; want n1 now", held, where, ok)
		}
		if at, _, _ := c.Earliest(job("Y", "2:ncpus=2", 10*time.Second), t0, false); !at.Equal(t0.Add(200 * time.Second)) {
			t.Errorf("held=%v: two nodes at %v, want when B ends (200 s)", held, at.Sub(t0))
		}
		c.Restore(a)
		if _, ok := c.PlaceAt(x, t0, nil, false); ok {
			t.Errorf("held=%v: X fits after A's hold is back", held)
		}
		if at, _, _ := c.Earliest(x, t0, false); !at.Equal(t0.Add(100 * time.Second)) {
			t.Errorf("held=%v: X's earliest %v after the restore, want A's end (100 s)", held, at.Sub(t0))
		}
		if c.Release(job("Q", "1:ncpus=1", time.Second)) {
			t.Errorf("held=%v: a queued job released", held)
		}
	}
}

// A job placed exclusively releases its whole node.
func TestCalendarReleaseExclusive(t *testing.T) {
	t.Parallel()
	a := running(job("A", "1:ncpus=1", 100*time.Second), t0, cpus("n1", "1"))
	a.Place = resc.Place{Sharing: resc.SharingExcl}
	w := NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}}, []*Node{node("n1", 4)}, []*Job{a})
	c := NewCalendar(w)
	x := job("X", "1:ncpus=4", time.Second)
	if _, ok := c.PlaceAt(x, t0, nil, false); ok {
		t.Fatal("X fits beside an exclusive job")
	}
	c.Release(a)
	if _, ok := c.PlaceAt(x, t0, nil, false); !ok {
		t.Fatal("X does not fit once the exclusive job is released")
	}
}

// A job suspended by preemption resumes only where it was, for the
// walltime it has left, and not into a reservation.
func TestCalendarResumable(t *testing.T) {
	t.Parallel()
	s := running(job("S", "1:ncpus=2", 100*time.Second), t0.Add(-40*time.Second), cpus("n1", "2"))
	s.State, s.Released, s.UsedWall = JobSuspended, true, 40*time.Second
	w := NewWorld(t0, &Server{Limits: NoLimits}, []*Queue{{Name: "workq", Execution: true}}, []*Node{node("n1", 2), node("n2", 2)}, []*Job{s})
	c := NewCalendar(w)
	if got := c.ResumeEnd(s).Sub(t0); got != 60*time.Second {
		t.Errorf("ResumeEnd %v from now, want 60 s (100 s walltime, 40 used)", got)
	}
	if !c.Resumable(s, false) {
		t.Fatal("not resumable on its free node")
	}
	c.Add([]Chunk{cpus("n1", "1")}, t0.Add(70*time.Second), t0.Add(90*time.Second))
	if !c.Resumable(s, false) {
		t.Error("a reservation after its end keeps it from resuming")
	}
	c.Add([]Chunk{cpus("n1", "1")}, t0.Add(30*time.Second), t0.Add(50*time.Second))
	if c.Resumable(s, false) {
		t.Error("resumable into a reservation on its node")
	}
	c2 := NewCalendar(w)
	c2.Block(t0.Add(30*time.Second), t0.Add(time.Hour))
	if c2.Resumable(s, false) || !c2.Resumable(s, true) {
		t.Error("a blocked window: resumable unless blocks are ignored")
	}
	c3 := NewCalendar(w)
	c3.Resume(s)
	if _, ok := c3.PlaceAt(job("X", "1:ncpus=1", time.Second), t0, []*Node{w.Node("n1")}, false); ok {
		t.Error("n1 free after S resumed there")
	}
	gone := *s
	gone.Where = []Chunk{cpus("n9", "2")}
	if c3.Resumable(&gone, false) {
		t.Error("resumable on a node that is not up")
	}
}
