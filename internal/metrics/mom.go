package metrics

import (
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gopbs/gopbs/internal/connlimit"
)

// MomSource is what pbs_mom shows at scrape time.
type MomSource interface {
	MetricsSnapshot() MomSnapshot
}

// MomSnapshot is the state pbs_mom's gauges show.
type MomSnapshot struct {
	// Running counts the jobs this mom runs as their first node (the
	// mother superior) that have not ended.
	Running int
	// LeaseRenewed is when the server last renewed the jobs' lease (zero:
	// not yet since the mom started), and Lease how long it was renewed
	// for.
	LeaseRenewed time.Time
	Lease        time.Duration
}

// Mom is pbs_mom's metrics.
type Mom struct {
	base
	starts   prometheus.Counter
	oomKills prometheus.Counter
}

// NewMom makes pbs_mom's registry; src is read at each scrape and limits
// are the mom's connection budgets (the metrics listener's is added).
func NewMom(src MomSource, log hclog.Logger, limits ...*connlimit.Limiter) *Mom {
	m := &Mom{base: newBase(log)}
	m.starts = prometheus.NewCounter(prometheus.CounterOpts{Name: MomStarts,
		Help: "Jobs this mom started (a shepherd launched for a new run)."})
	m.oomKills = prometheus.NewCounter(prometheus.CounterOpts{Name: MomOOMKills,
		Help: "Jobs that ended killed for their memory limit: the kernel's OOM killer acted in their cgroup."})
	m.reg.MustRegister(m.starts, m.oomKills,
		&momState{src: src,
			running:  prometheus.NewDesc(MomJobsRunning, "Jobs running on this mom as their first node (sister parts not counted).", nil, nil),
			leaseAge: prometheus.NewDesc(MomLeaseAge, "Seconds since the server last renewed the jobs' lease (absent until the first renewal); jobs are killed when it reaches pbs_mom_lease_seconds.", nil, nil),
			lease:    prometheus.NewDesc(MomLease, "How long the last renewal of the jobs' lease was for.", nil, nil)},
		newConnCollector(MomConnections, "pbs_mom", append(limits, m.limit)))
	return m
}

// Started counts a job start.
func (m *Mom) Started() { m.starts.Inc() }

// OOMKilled counts a job ended by its memory limit.
func (m *Mom) OOMKilled() { m.oomKills.Inc() }

type momState struct {
	src                      MomSource
	running, leaseAge, lease *prometheus.Desc
}

func (c *momState) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.running
	ch <- c.leaseAge
	ch <- c.lease
}

func (c *momState) Collect(ch chan<- prometheus.Metric) {
	snap := c.src.MetricsSnapshot()
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(snap.Running))
	if !snap.LeaseRenewed.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.leaseAge, prometheus.GaugeValue, time.Since(snap.LeaseRenewed).Seconds())
		ch <- prometheus.MustNewConstMetric(c.lease, prometheus.GaugeValue, snap.Lease.Seconds())
	}
}
