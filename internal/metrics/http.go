package metrics

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gopbs/gopbs/internal/connlimit"
)

// Budget is a metrics listener's connection budget: its peers are a few
// scrapers, each polling every few seconds over a connection or two.
// Beyond it, connections are refused (or the oldest pending one closed) by
// this listener alone: the batch ports have budgets of their own.
var Budget = connlimit.Budget{Max: 64, PerPeer: 16, Pending: 32, PerPeerPending: 8}

// bounds are the HTTP server's limits. A request's headers must arrive
// within header and fit in maxHeader bytes (else 431); a response the
// peer does not read within write is cut off; an idle keep-alive
// connection is closed after idle; at most scrapes scrapes run at once
// (others get 503), each within scrape (else 503).
type bounds struct {
	header, read, write, idle, scrape time.Duration
	maxHeader, scrapes                int
}

var defaultBounds = bounds{
	header: 5 * time.Second, read: 10 * time.Second, write: 30 * time.Second, idle: 60 * time.Second,
	scrape: 10 * time.Second, maxHeader: 8 << 10, scrapes: 2,
}

// Path is where the metrics are served; every other path is 404.
const Path = "/metrics"

// NewLimiter is the budget of a daemon's metrics listener, made before
// the listener so that the daemon's connection family counts it.
func NewLimiter(log hclog.Logger) *connlimit.Limiter {
	return connlimit.New(ListenerClass, Budget, log)
}

// Listener serves a registry over HTTP.
type Listener struct {
	l    net.Listener
	srv  *http.Server
	done chan struct{}
}

// Listen serves g at /metrics on addr (host:port), admitting connections
// through limit (NewLimiter). It returns once the socket listens.
func Listen(addr string, g prometheus.Gatherer, limit *connlimit.Limiter, log hclog.Logger) (*Listener, error) {
	return listen(addr, g, limit, log, defaultBounds)
}

func listen(addr string, g prometheus.Gatherer, limit *connlimit.Limiter, log hclog.Logger, b bounds) (*Listener, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	nl, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener on %s: %w", addr, err)
	}
	scrape := promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:            promLogger{log},
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: b.scrapes,
		Timeout:             b.scrape,
	})
	mux := http.NewServeMux()
	mux.HandleFunc(Path, func(w http.ResponseWriter, r *http.Request) {
		// The request's headers are in: the peer proved it speaks HTTP,
		// and its connection can no longer be closed to make room.
		connlimit.Established(r.Context())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		scrape.ServeHTTP(w, r)
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: b.header,
		ReadTimeout:       b.read,
		WriteTimeout:      b.write,
		IdleTimeout:       b.idle,
		MaxHeaderBytes:    b.maxHeader,
		// net/http's own complaints (a bad request, a failed accept) are
		// a peer's doing: at debug level, so a flood is not a log flood.
		ErrorLog:    log.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
		ConnContext: connlimit.ConnContext,
	}
	l := &Listener{l: nl, srv: srv, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		err := srv.Serve(&connlimit.Listener{Listener: nl, Limit: limit})
		if !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "error", err)
		}
	}()
	log.Info("serving metrics", "addr", nl.Addr().String(), "path", Path)
	return l, nil
}

// Addr is the address the listener is bound to.
func (l *Listener) Addr() string { return l.l.Addr().String() }

// Close stops the listener and closes its connections.
func (l *Listener) Close() error {
	if l == nil {
		return nil
	}
	err := l.srv.Close()
	<-l.done
	return err
}

// promLogger hands promhttp's errors (a collector that failed) to the
// daemon's log.
type promLogger struct{ log hclog.Logger }

func (p promLogger) Println(v ...any) { p.log.Warn("metrics: " + fmt.Sprint(v...)) }
