package server

import (
	"sync"
	"time"

	"github.com/gopbs/gopbs/internal/model"
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
// startBatch closes it when the job's mom has answered that it started
// it, runJobs for a start that failed once the job is back in its queue
// (a delete let through earlier would find it still R and ask a mom that
// never had it).
// The zero value is not ready: call init.
type startGate struct {
	mu      sync.Mutex
	pending map[model.JobKey]*gate
}

// gate is one start in flight: done is closed when it is answered;
// waiters counts the requests held (for tests that must know one is).
type gate struct {
	done    chan struct{}
	waiters int
}

func (g *startGate) init() { g.pending = map[model.JobKey]*gate{} }

// open marks the job's start as in flight.
func (g *startGate) open(k model.JobKey) {
	g.mu.Lock()
	if _, ok := g.pending[k]; !ok {
		g.pending[k] = &gate{done: make(chan struct{})}
	}
	g.mu.Unlock()
}

// close marks the job's start as answered; closing twice is harmless.
func (g *startGate) close(k model.JobKey) {
	g.mu.Lock()
	if gt, ok := g.pending[k]; ok {
		delete(g.pending, k)
		close(gt.done)
	}
	g.mu.Unlock()
}

// wait returns once the job's start is answered, at once when none is in
// flight, or after limit (the mom request's own timeout: a signal then
// goes out and gets the mom's answer, whatever it is).
func (g *startGate) wait(k model.JobKey, limit time.Duration) {
	g.mu.Lock()
	gt, ok := g.pending[k]
	if ok {
		gt.waiters++
	}
	g.mu.Unlock()
	if !ok {
		return
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-gt.done:
	case <-t.C:
	}
	g.mu.Lock()
	gt.waiters--
	g.mu.Unlock()
}

// held is how many requests wait on the job's start.
func (g *startGate) held(k model.JobKey) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gt, ok := g.pending[k]; ok {
		return gt.waiters
	}
	return 0
}
