package server

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// The server's metrics after a known workload, scraped over HTTP: jobs by
// queue and state from the counters, submissions and ends counted once
// committed, request and commit histograms, nodes by state, connections.
func TestMetricsServerWorkload(t *testing.T) {
	t.Parallel()
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
	got := testcluster.MustScrape(t, url)
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

// BenchmarkMetricsScrape is a Prometheus scrape of a server holding
// 100,000 jobs in four queues (a quarter of them held, 1,000 running) on
// 1,000 reported nodes: "http" is the whole scrape over the metrics
// listener (ms/op, the target is under 50 ms), "snapshot" the
// part under the server's read lock. Setting up submits the jobs through
// the socket (32 clients, group commit): run with -benchtime 100x or so.
func BenchmarkMetricsScrape(b *testing.B) {
	const jobs, nodes, running = 100000, 1000, 1000
	s, c := newTestServerAt(&testing.T{}, b.TempDir(), func(cfg *Config) { cfg.MetricsAddr = "127.0.0.1:0" })
	b.Cleanup(func() { c.Close(); s.Close() })
	queues := []string{"workq", "q1", "q2", "q3"}
	for _, q := range queues[1:] {
		if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjQueue, Name: q, Attrs: []proto.Attr{
			{Name: "queue_type", Value: "e"}, {Name: "enabled", Value: "t"}, {Name: "started", Value: "t"}}}); err != nil {
			b.Fatal(err)
		}
	}
	benchNodes(b, s, nodes)
	submitConcurrently(b, s, 32, jobs, func(i int) *proto.SubmitRequest {
		attrs := []proto.Attr{{Name: proto.AttrResourceList, Resource: "select", Value: "1:ncpus=1"}}
		if i%4 == 3 {
			attrs = append(attrs, proto.Attr{Name: proto.AttrHoldTypes, Value: "u"})
		}
		return &proto.SubmitRequest{Queue: queues[i%len(queues)], Script: []byte("#!/bin/sh\n"), Attrs: attrs}
	})
	all, _, err := c.StatusJobs(&proto.StatusRequest{Attrs: []string{"job_state"}})
	if err != nil {
		b.Fatal(err)
	}
	runs := make([]proto.RunSpec, 0, running)
	for _, st := range all {
		if len(runs) < running && st.Attrs[0].Value == "Q" {
			runs = append(runs, proto.RunSpec{JobID: st.Name, Nodes: fmt.Sprintf("s%06d", len(runs))})
		}
	}
	if res, err := c.RunJobs(runs); err != nil || res[0].Code != 0 {
		b.Fatal(err, res[0])
	}
	url := "http://" + s.MetricsAddr() + metrics.Path
	got := testcluster.MustScrape(b, url)
	total := 0.0
	for _, q := range queues {
		for _, st := range slotStates {
			v, _ := got.Get(metrics.ServerJobs, "queue", q, "state", st)
			total += v
		}
	}
	if r, _ := got.Get(metrics.ServerJobs, "queue", "workq", "state", "running"); total != jobs || r == 0 {
		b.Fatalf("the scrape shows %v jobs (%v running in workq), want %d", total, r, jobs)
	}
	b.Run("http", func(b *testing.B) {
		client := &http.Client{}
		var size int64
		for b.Loop() {
			resp, err := client.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			size, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatal(resp.Status)
			}
		}
		b.ReportMetric(float64(size), "bytes/scrape")
	})
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			s.MetricsSnapshot()
		}
	})
}
