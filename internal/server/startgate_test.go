package server

import (
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/model"
)

// A signal waits for its job's start to be answered, not for others'; a
// job without a start in flight is not waited for; a start that is never
// answered holds a signal only until the limit.
func TestStartGate(t *testing.T) {
	t.Parallel()
	var g startGate
	g.init()
	a, b := model.JobKey{Seq: 1}, model.JobKey{Seq: 2, Index: 3}

	start := time.Now()
	g.wait(a, time.Minute)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("wait for a job without a start in flight took %v", d)
	}

	g.open(a)
	g.open(a) // a second open of the same start keeps one gate
	waited := make(chan struct{})
	go func() { g.wait(a, time.Minute); close(waited) }()
	g.wait(b, time.Minute) // another job's start does not hold b
	select {
	case <-waited:
		t.Fatal("wait returned while the start was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	g.close(a)
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not return when the start was answered")
	}
	g.close(a) // closing twice is harmless

	g.open(b)
	start = time.Now()
	g.wait(b, 100*time.Millisecond)
	if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("wait on a start never answered returned after %v, want the 100ms limit", d)
	}
}
