package mom

import "github.com/gopbs/gopbs/internal/metrics"

// MetricsSnapshot is what the mom's gauges show (metrics.MomSource): the
// jobs it runs as their first node that have not ended, and its lease.
func (m *Mom) MetricsSnapshot() metrics.MomSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	snap := metrics.MomSnapshot{LeaseRenewed: m.leaseRenewed, Lease: m.lease}
	for _, j := range m.jobs {
		if !j.sister && j.result == nil {
			snap.Running++
		}
	}
	return snap
}
