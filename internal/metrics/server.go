package metrics

import (
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/proto"
)

// ServerSource is what pbs_server shows at scrape time.
type ServerSource interface {
	// MetricsSnapshot copies the job counts and node states. The server
	// takes its read lock for it, briefly: it reads counts it keeps
	// anyway (one per queue and state) and each node's state, never every
	// job.
	MetricsSnapshot() ServerSnapshot
}

// ServerSnapshot is the state pbs_server's gauges show.
type ServerSnapshot struct {
	// Jobs are the job counts by queue and state, each pair once.
	Jobs []JobCount
	// Nodes counts the nodes by state, as pbsnodes shows it ("free",
	// "job-busy", "down", "offline,down", ...).
	Nodes map[string]int
}

// JobCount is how many jobs of a queue are in a state ("queued",
// "running", ...).
type JobCount struct {
	Queue, State string
	Jobs         int
}

// Server is pbs_server's metrics.
type Server struct {
	base
	submissions    *prometheus.CounterVec
	ends           *prometheus.CounterVec
	requeues       *prometheus.CounterVec
	requests       *prometheus.HistogramVec
	commitSeconds  prometheus.Histogram
	commitBatch    prometheus.Histogram
	commitFailures prometheus.Counter
}

// requestBuckets span a status reply from memory (100 µs) to a long
// listing or a slow disk's commit (10 s).
var requestBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewServer makes pbs_server's registry; src is read at each scrape and
// limits are the server's connection budgets (the metrics listener's is
// added).
func NewServer(src ServerSource, log hclog.Logger, limits ...*connlimit.Limiter) *Server {
	m := &Server{base: newBase(log)}
	m.submissions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: ServerSubmissions,
		Help: "Jobs submitted (an array counts once), by the queue they were placed in."}, []string{"queue"})
	m.ends = prometheus.NewCounterVec(prometheus.CounterOpts{Name: ServerEnds,
		Help: "Jobs and subjobs that finished, by queue and result (ok: exit status 0; failed: another exit status, or could not run; deleted)."}, []string{"queue", "result"})
	m.requeues = prometheus.NewCounterVec(prometheus.CounterOpts{Name: ServerRequeues,
		Help: "Running jobs put back in their queue (qrerun, node failure, lapsed lease, failed start on the node), by queue."}, []string{"queue"})
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: ServerRequestSeconds,
		Help:    "Time from a request's arrival to its reply written, by request type (commands' and daemons').",
		Buckets: requestBuckets}, []string{"type"})
	m.commitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: ServerCommitSeconds,
		Help: "Time of one store commit (the transaction and its fsyncs).", Buckets: requestBuckets})
	m.commitBatch = prometheus.NewHistogram(prometheus.HistogramOpts{Name: ServerCommitBatch,
		Help:    "Mutations (a submission, a state change...) sharing one store commit (group commit).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 10)})
	m.commitFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: ServerCommitFailures,
		Help: "Store commits that failed (the server then reloaded its state from the store)."})
	m.reg.MustRegister(m.submissions, m.ends, m.requeues, m.requests, m.commitSeconds, m.commitBatch, m.commitFailures,
		&serverState{src: src,
			jobs:  prometheus.NewDesc(ServerJobs, "Jobs by queue and state (transit, queued, held, waiting, running, exiting, begun, finished), subjobs that are jobs of their own included, as qstat -Q's state_count.", []string{"queue", "state"}, nil),
			nodes: prometheus.NewDesc(ServerNodes, "Nodes by state, as pbsnodes shows it.", []string{"state"}, nil)},
		newConnCollector(ServerConnections, "pbs_server", append(limits, m.limit)))
	return m
}

// Submitted counts a submission committed to queue.
func (m *Server) Submitted(queue string) { m.submissions.WithLabelValues(queue).Inc() }

// Ended counts a job's end committed (result: EndOK, EndFailed or
// EndDeleted).
func (m *Server) Ended(queue, result string) { m.ends.WithLabelValues(queue, result).Inc() }

// Requeued counts a running job put back in queue.
func (m *Server) Requeued(queue string) { m.requeues.WithLabelValues(queue).Inc() }

// Request observes how long a request of type t took.
func (m *Server) Request(t proto.MsgType, took time.Duration) {
	name := RequestOther
	if t.Known() {
		name = t.String()
	}
	m.requests.WithLabelValues(name).Observe(took.Seconds())
}

// Commit observes a store commit (store.Options.AfterCommit).
func (m *Server) Commit(batches int, took time.Duration, err error) {
	if err != nil {
		m.commitFailures.Inc()
		return
	}
	m.commitSeconds.Observe(took.Seconds())
	m.commitBatch.Observe(float64(batches))
}

// serverState computes the server's gauges at scrape time.
type serverState struct {
	src         ServerSource
	jobs, nodes *prometheus.Desc
}

func (c *serverState) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.nodes
}

func (c *serverState) Collect(ch chan<- prometheus.Metric) {
	// The snapshot is taken first, under the server's lock; the metrics
	// are sent after, so a slow gatherer never holds the lock.
	snap := c.src.MetricsSnapshot()
	for _, j := range snap.Jobs {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(j.Jobs), j.Queue, j.State)
	}
	for state, n := range snap.Nodes {
		ch <- prometheus.MustNewConstMetric(c.nodes, prometheus.GaugeValue, float64(n), state)
	}
}
