package server

import (
	"sync"
	"time"

	"gopbs/internal/model"
)

// startGate holds the jobs whose start is committed (the job shows R)
// while their mom has not answered the start request yet. A signal or a
// delete for such a job waits until the answer is in: sent at once, it
// could reach the mom before the start does (they travel on different
// pooled connections, and a mom starts a request's jobs a few at a
// time), and the mom would answer that the job is not running there,
// which a user who just saw it R reads as a lost qdel.
//
// runJobs opens a job's gate inside the commit that records it running
// (the job is seen R only once that commit is done, so no signal can
// slip in before the gate), and closes it again if that commit fails;
// startBatch closes it when the job's mom has answered, sendStarts for a
// start that never reached a mom.
// The zero value is not ready: call init.
type startGate struct {
	mu      sync.Mutex
	pending map[model.JobKey]chan struct{}
}

func (g *startGate) init() { g.pending = map[model.JobKey]chan struct{}{} }

// open marks the job's start as in flight.
func (g *startGate) open(k model.JobKey) {
	g.mu.Lock()
	if _, ok := g.pending[k]; !ok {
		g.pending[k] = make(chan struct{})
	}
	g.mu.Unlock()
}

// close marks the job's start as answered; closing twice is harmless.
func (g *startGate) close(k model.JobKey) {
	g.mu.Lock()
	if ch, ok := g.pending[k]; ok {
		delete(g.pending, k)
		close(ch)
	}
	g.mu.Unlock()
}

// wait returns once the job's start is answered, at once when none is in
// flight, or after limit (the mom request's own timeout: a signal then
// goes out and gets the mom's answer, whatever it is).
func (g *startGate) wait(k model.JobKey, limit time.Duration) {
	g.mu.Lock()
	ch, ok := g.pending[k]
	g.mu.Unlock()
	if !ok {
		return
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}
