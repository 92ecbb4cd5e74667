package metrics

import (
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gopbs/gopbs/internal/connlimit"
)

// base is what every daemon's type has: its registry, with the Go
// runtime's and the process's families (go_*, process_*), and the budget
// of its metrics listener.
type base struct {
	reg   *prometheus.Registry
	limit *connlimit.Limiter
}

func newBase(log hclog.Logger) base {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return base{reg: reg, limit: NewLimiter(log)}
}

// Registry is the daemon's registry (tests gather it directly).
func (b *base) Registry() *prometheus.Registry { return b.reg }

// Limiter is the metrics listener's connection budget, so that the
// daemon can count it among its classes.
func (b *base) Limiter() *connlimit.Limiter { return b.limit }

// Listen serves the registry at /metrics on addr.
func (b *base) Listen(addr string, log hclog.Logger) (*Listener, error) {
	return Listen(addr, b.reg, b.limit, log)
}
