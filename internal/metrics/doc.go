// Package metrics is what pbs_server, pbs_sched and pbs_mom tell
// Prometheus, and the listener that serves it.
//
// Each daemon has a type here (Server, Sched, Mom) holding its metric
// families in a registry of its own (with the Go runtime's and the
// process's): counters and histograms the daemon feeds where things
// happen (a submission committed, a request answered, a cycle's phase
// done, a job started), and gauges of state computed at scrape time from
// what the daemon keeps anyway (the server's job counts per queue and
// state), never by walking every job. Every metric name is defined once,
// in names.go.
//
// The daemon serves its registry at /metrics on the host:port pbs.conf
// names (PBS_SERVER_METRICS, PBS_SCHED_METRICS, PBS_MOM_METRICS; none by
// default) through Listen. That listener admits connections under a
// connection budget of its own (connlimit class "metrics", Budget), and
// bounds headers, slow peers and concurrent scrapes (http.go), so that a
// flood on it takes nothing from the batch ports' budgets.
//
// Who calls: a daemon makes its type at start (NewServer, NewSched,
// NewMom), calls its methods from any goroutine (they are safe for
// concurrent use and cheap: an atomic add, a histogram observation), and
// calls Listen when pbs.conf names an address.
package metrics
