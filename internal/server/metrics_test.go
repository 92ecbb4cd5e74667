package server

import (
	"testing"

	"gopbs/internal/metrics"
	"gopbs/internal/testcluster"
	"gopbs/proto"
)

// The server's metrics after a known workload, scraped over HTTP: jobs by
// queue and state from the counters, submissions and ends counted once
// committed, request and commit histograms, nodes by state, connections.
func TestMetricsServerWorkload(t *testing.T) {
	dir := t.TempDir()
	s, c := newTestServerAt(t, dir, func(cfg *Config) { cfg.MetricsAddr = "127.0.0.1:0" })
	url := "http://" + s.MetricsAddr() + metrics.Path
	var ids []string
	for i := 0; i < 3; i++ {
		id, err := submit(c)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := c.HoldJob(ids[1], "u"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteJob(ids[2], proto.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjNode, Name: "n1"}); err != nil {
		t.Fatal(err)
	}
	got, err := testcluster.Scrape(url)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		v      float64
		name   string
		labels []string
	}{
		{1, metrics.ServerJobs, []string{"queue", "workq", "state", "queued"}},
		{1, metrics.ServerJobs, []string{"queue", "workq", "state", "held"}},
		{0, metrics.ServerJobs, []string{"queue", "workq", "state", "running"}},
		{3, metrics.ServerSubmissions, []string{"queue", "workq"}},
		{1, metrics.ServerEnds, []string{"queue", "workq", "result", metrics.EndDeleted}},
		{3, metrics.ServerRequestSeconds + "_count", []string{"type", "Submit"}},
		{1, metrics.ServerRequestSeconds + "_count", []string{"type", "DeleteJob"}},
		{1, metrics.ServerNodes, []string{"state", "state-unknown,down"}},
		{1, metrics.ServerConnections, []string{"class", "local"}},
		{0, metrics.ServerConnections, []string{"class", "remote"}},
	} {
		if v, ok := got.Get(w.name, w.labels...); !ok || v != w.v {
			t.Errorf("%s = %v (present %v), want %v", testcluster.SeriesKey(w.name, w.labels...), v, ok, w.v)
		}
	}
	// Every durable change went through a commit: submissions, hold,
	// delete, node, acl_roots at least.
	if n, _ := got.Get(metrics.ServerCommitSeconds + "_count"); n < 6 {
		t.Errorf("%v commits observed, want at least 6", n)
	}
	if n, _ := got.Get(metrics.ServerCommitBatch + "_sum"); n < 6 {
		t.Errorf("%v mutations in the commits observed, want at least 6", n)
	}
}
