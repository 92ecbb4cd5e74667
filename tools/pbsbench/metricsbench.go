package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"

	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// metricsExperiment times Prometheus scrapes of a real pbs_server
// (PBS_SERVER_METRICS) holding jobs submitted through its socket, a
// quarter of them held and running ones started on simulated nodes:
// scrapes one after another on a quiet server, then while loops submit.
func metricsExperiment(nodes, jobs, running, scrapes, loops int) {
	tb := &benchTB{}
	defer tb.cleanup()
	addr := fmt.Sprintf("127.0.0.1:%d", testcluster.FreePort(tb))
	cl := testcluster.New(tb, testcluster.Options{ServerArgs: []string{"-log-level", "warn"}, Conf: "PBS_SERVER_METRICS=" + addr + "\n"})
	cl.MustRun("qmgr", "-c", "set server scheduling = False")
	cli, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(cl.Home, "pbs_server.sock")})
	if err != nil {
		log.Fatal(err)
	}
	t0 := time.Now()
	sim := startSimulator(cl, cli, nodes, 10)
	log.Printf("%d simulated nodes created in %v", nodes, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	parallel(16, jobs, cl, func(c *proto.Client, i int) {
		req := &proto.SubmitRequest{Script: []byte("#!/bin/sh\n/bin/true\n"), Attrs: []proto.Attr{{Name: proto.AttrResourceList, Resource: "select", Value: "1:ncpus=1"}}}
		if i%4 == 3 {
			req.Attrs = append(req.Attrs, proto.Attr{Name: proto.AttrHoldTypes, Value: "u"})
		}
		if _, err := c.Submit(req); err != nil {
			log.Fatal(err)
		}
	})
	log.Printf("%d jobs submitted in %v", jobs, time.Since(t0).Round(time.Millisecond))
	time.Sleep(1500 * time.Millisecond) // a status report covers every node
	all, _, err := cli.StatusJobs(&proto.StatusRequest{Attrs: []string{"job_state"}})
	if err != nil {
		log.Fatal(err)
	}
	var runs []proto.RunSpec
	for _, st := range all {
		if len(runs) < running && len(runs) < len(sim.nodes) && st.Attrs[0].Value == "Q" {
			runs = append(runs, proto.RunSpec{JobID: st.Name, Nodes: sim.nodes[len(runs)]})
		}
	}
	if len(runs) > 0 {
		if _, err := cli.RunJobs(runs); err != nil {
			log.Fatal(err)
		}
	}
	url := "http://" + addr + metrics.Path
	s, err := testcluster.Scrape(url)
	if err != nil {
		log.Fatal(err)
	}
	shown := 0.0
	for k, v := range s {
		if len(k) > len(metrics.ServerJobs) && k[:len(metrics.ServerJobs)+1] == metrics.ServerJobs+"{" {
			shown += v
		}
	}
	log.Printf("the scrape shows %.0f jobs", shown)

	fmt.Printf("| pbs_server holding | scrapes | median | p90 | p99 | max | bytes |\n|---|---|---|---|---|---|---|\n")
	row := func(what string, d []time.Duration, size int64) {
		sort.Slice(d, func(a, b int) bool { return d[a] < d[b] })
		q := func(p float64) string { return fmt.Sprintf("%.2f ms", float64(d[int(p*float64(len(d)-1))])/1e6) }
		fmt.Printf("| %s | %d | %s | %s | %s | %s | %d |\n", what, len(d), q(0.5), q(0.9), q(0.99), q(1), size)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	scrape := func() (time.Duration, int64) {
		start := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			log.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			log.Fatalf("scrape: %s", resp.Status)
		}
		return time.Since(start), n
	}
	state := fmt.Sprintf("%d jobs (%d held, %d running) on %d nodes", jobs, jobs/4, len(runs), nodes)
	var quiet []time.Duration
	var size int64
	for i := 0; i < scrapes; i++ {
		d, n := scrape()
		quiet = append(quiet, d)
		size = n
	}
	row(state+", quiet", quiet, size)

	// The same while loops submit, each on its own connection.
	var stop atomic.Bool
	var submitted atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		onClients(loops, cl, func(c *proto.Client) {
			req := &proto.SubmitRequest{Script: []byte("#!/bin/sh\n"), Attrs: []proto.Attr{{Name: proto.AttrHoldTypes, Value: "u"}}}
			for !stop.Load() {
				if _, err := c.Submit(req); err != nil {
					log.Fatal(err)
				}
				submitted.Add(1)
			}
		})
	}()
	var busy []time.Duration
	t0 = time.Now()
	for i := 0; i < scrapes; i++ {
		d, n := scrape()
		busy = append(busy, d)
		size = n
	}
	took := time.Since(t0)
	stop.Store(true)
	<-done
	row(fmt.Sprintf("%s, %d loops submitting (%.0f jobs/s)", state, loops, float64(submitted.Load())/took.Seconds()), busy, size)
}
