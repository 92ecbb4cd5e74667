package metrics

import (
	"maps"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gopbs/gopbs/internal/connlimit"
)

// Sched is pbs_sched's metrics.
type Sched struct {
	base
	cycles     prometheus.Counter
	phases     *prometheus.HistogramVec
	started    prometheus.Counter
	backfilled prometheus.Counter
	refused    *prometheus.CounterVec

	// usage is the fair-share usage as of the last cycle (SetUsage):
	// shown as is, so that a scrape never waits for a cycle.
	mu    sync.Mutex
	usage map[string]float64
}

// phaseBuckets span a cycle's phase from a few jobs (1 ms) to a large
// site's fetch or decide (a minute; the cycle's limit is 3).
var phaseBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 180}

// NewSched makes pbs_sched's registry; limits are the scheduler's
// connection budgets (the metrics listener's is added).
func NewSched(log hclog.Logger, limits ...*connlimit.Limiter) *Sched {
	m := &Sched{base: newBase(log)}
	m.cycles = prometheus.NewCounter(prometheus.CounterOpts{Name: SchedCycles,
		Help: "Scheduling cycles run to their end (fetch, decide, apply)."})
	m.phases = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: SchedPhaseSeconds,
		Help:    "Time of each phase of a cycle: fetch (read the server's state), decide (the policy), apply (send starts and comments).",
		Buckets: phaseBuckets}, []string{"phase"})
	m.started = prometheus.NewCounter(prometheus.CounterOpts{Name: SchedStarted,
		Help: "Jobs the scheduler started (the server accepted the start), backfilled ones included."})
	m.backfilled = prometheus.NewCounter(prometheus.CounterOpts{Name: SchedBackfilled,
		Help: "Of the jobs started, those started by backfilling: in a gap before a higher job's reservation."})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: SchedRefused,
		Help: "Starts the server refused (or that were lost with their request), by the reason's PBS error text."}, []string{"reason"})
	m.reg.MustRegister(m.cycles, m.phases, m.started, m.backfilled, m.refused,
		&usageCollector{m: m, desc: prometheus.NewDesc(SchedFairshareUsage,
			"Fair-share usage by entity (the jobs' owners): cpu seconds, decayed by half_life, as of the last cycle.", []string{"entity"}, nil)},
		newConnCollector(SchedConnections, "pbs_sched", append(limits, m.limit)))
	return m
}

// Phase observes how long a phase of a cycle took (PhaseFetch,
// PhaseDecide, PhaseApply).
func (m *Sched) Phase(phase string, took time.Duration) {
	m.phases.WithLabelValues(phase).Observe(took.Seconds())
}

// Cycle counts a cycle run to its end: started jobs, of which backfilled,
// and the starts refused, by reason.
func (m *Sched) Cycle(started, backfilled int, refused map[string]int) {
	m.cycles.Inc()
	m.started.Add(float64(started))
	m.backfilled.Add(float64(backfilled))
	for why, n := range refused {
		m.refused.WithLabelValues(why).Add(float64(n))
	}
}

// SetUsage records the fair-share usage by entity (nil: fair share is
// off, nothing shown). The map is copied.
func (m *Sched) SetUsage(u map[string]float64) {
	c := maps.Clone(u)
	m.mu.Lock()
	m.usage = c
	m.mu.Unlock()
}

type usageCollector struct {
	m    *Sched
	desc *prometheus.Desc
}

func (c *usageCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *usageCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	u := c.m.usage // replaced, never changed, by SetUsage
	c.m.mu.Unlock()
	for entity, v := range u {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, entity)
	}
}
