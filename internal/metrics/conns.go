package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gopbs/gopbs/internal/connlimit"
)

// connCollector shows a daemon's connection budgets at scrape time: the
// connections of each class, those pending, and the refusals and
// evictions since the daemon started (connlimit.Stats).
type connCollector struct {
	limits                          []*connlimit.Limiter
	held, pending, refused, evicted *prometheus.Desc
}

func newConnCollector(stem, daemon string, limits []*connlimit.Limiter) *connCollector {
	class := []string{"class"}
	return &connCollector{
		limits:  limits,
		held:    prometheus.NewDesc(stem, "Connections to "+daemon+" held now, by class (connlimit budget).", class, nil),
		pending: prometheus.NewDesc(stem+PendingSuffix, "Connections to "+daemon+" not yet established (handshake or first request pending), by class.", class, nil),
		refused: prometheus.NewDesc(stem+RefusedSuffix, "Connections to "+daemon+" refused because their class or peer had no room, by class.", class, nil),
		evicted: prometheus.NewDesc(stem+EvictedSuffix, "Pending connections to "+daemon+" closed to make room for newer ones, by class.", class, nil),
	}
}

func (c *connCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.held
	ch <- c.pending
	ch <- c.refused
	ch <- c.evicted
}

func (c *connCollector) Collect(ch chan<- prometheus.Metric) {
	for _, l := range c.limits {
		if l == nil {
			continue
		}
		st := l.Stats()
		ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(st.Held), st.Class)
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(st.Pending), st.Class)
		ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(st.Refused), st.Class)
		ch <- prometheus.MustNewConstMetric(c.evicted, prometheus.CounterValue, float64(st.Evicted), st.Class)
	}
}
