package server

import (
	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/model"
)

// The server's Prometheus metrics (package metrics): the counters are fed
// where things are committed (submit, finish, requeueJob), the request
// histogram in handle, the store's in its AfterCommit; the gauges are
// read here at scrape time.

// slotStates names the state slots of counters (stateSlot) as the
// metrics' state label shows them.
var slotStates = [8]string{"transit", "queued", "held", "waiting", "running", "exiting", "begun", "finished"}

// MetricsSnapshot copies the job counts per queue and state (kept by
// the job table, one array of 8 per queue: nothing here walks the jobs) and each node's state, under the read lock
// (metrics.ServerSource). Every queue shows every state, zeros included,
// so that a series does not vanish when its count drops to zero.
func (s *Server) MetricsSnapshot() metrics.ServerSnapshot {
	s.mu.RLock()
	byQueue := make(map[string][8]int, s.queues.Len())
	for name := range s.queues.All() {
		byQueue[name] = [8]int{}
	}
	for q, counts := range s.jobs.QueueStates() { // a deleted queue's only while it has jobs
		byQueue[q] = counts
	}
	byState, view := make(map[string]int, 8), s.nodeView()
	for _, n := range s.nodes.All() {
		byState[view.State(n)]++
	}
	s.mu.RUnlock()
	jobs := make([]metrics.JobCount, 0, 8*len(byQueue))
	for q, counts := range byQueue {
		for i, n := range counts {
			jobs = append(jobs, metrics.JobCount{Queue: q, State: slotStates[i], Jobs: n})
		}
	}
	return metrics.ServerSnapshot{Jobs: jobs, Nodes: byState}
}

// endResult is the result label of j's end (finish's arguments): a job
// whose delete was asked for ends deleted, whatever its run ended with
// (killed by its delete, a running job's obit has a signal's status).
func endResult(j *model.Job, substate, exit int) string {
	switch {
	case substate == model.SubTerminated || j.DeleteAskedBy != "":
		return metrics.EndDeleted
	case substate == model.SubFinished && exit == 0:
		return metrics.EndOK
	}
	return metrics.EndFailed
}

// Metrics is the server's registry and metrics listener budget (for
// tests and benchmarks that scrape without a listener).
func (s *Server) Metrics() *metrics.Server { return s.metrics }

// MetricsAddr is the metrics listener's bound address ("" when none).
func (s *Server) MetricsAddr() string {
	if s.metricsListener == nil {
		return ""
	}
	return s.metricsListener.Addr()
}
