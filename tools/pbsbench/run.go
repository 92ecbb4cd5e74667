package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// runExperiment measures qrun-to-process-start latency and the throughput
// of short jobs started with qrun through several moms.
func runExperiment(moms, jobs, samples int) {
	tb := &benchTB{}
	defer tb.cleanup()
	cl := testcluster.New(tb, testcluster.Options{ServerArgs: []string{"-log-level", "warn"}})
	var names []string
	for i := 1; i <= moms; i++ {
		name := "n" + strconv.Itoa(i)
		cl.AddMom(name, testcluster.MomOptions{})
		names = append(names, name)
	}
	cli, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(cl.Home, "pbs_server.sock")})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()

	// Latency: the job's first act is to record the time.
	stamp := filepath.Join(cl.Home, "stamp")
	var lat []time.Duration
	for i := 0; i < samples; i++ {
		os.Remove(stamp)
		id, err := cli.Submit(&proto.SubmitRequest{Script: []byte("#!/bin/sh\ndate +%s%N > " + stamp + ".tmp && mv " + stamp + ".tmp " + stamp + "\n")})
		if err != nil {
			log.Fatal(err)
		}
		t0 := time.Now()
		if err := cli.RunJob(id, names[i%len(names)]); err != nil {
			log.Fatal(err)
		}
		var started time.Time
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
			if b, err := os.ReadFile(stamp); err == nil && len(b) > 1 {
				ns, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
				started = time.Unix(0, ns)
				break
			}
		}
		if started.IsZero() {
			log.Fatalf("job %s never started", id)
		}
		lat = append(lat, started.Sub(t0))
		waitFinished(cli, id)
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	fmt.Printf("qrun to job start over %d runs (%d moms): median %v, p90 %v, max %v\n",
		len(lat), moms, lat[len(lat)/2].Round(100*time.Microsecond), lat[len(lat)*9/10].Round(100*time.Microsecond), lat[len(lat)-1].Round(100*time.Microsecond))

	// Throughput: submit, then qrun every job from one client per mom and
	// wait until all have finished.
	ids := make([]string, jobs)
	for i := range ids {
		if ids[i], err = cli.Submit(&proto.SubmitRequest{Script: []byte("#!/bin/sh\n/bin/true\n")}); err != nil {
			log.Fatal(err)
		}
	}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, node := range names {
		wg.Add(1)
		go func(node string) {
			defer wg.Done()
			c, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(cl.Home, "pbs_server.sock")})
			if err != nil {
				log.Fatal(err)
			}
			defer c.Close()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(ids)) {
					return
				}
				for {
					err := c.RunJob(ids[i], node)
					if err == nil {
						break
					}
					if proto.CodeOf(err) != proto.PBSE_RESCUNAV {
						log.Fatalf("qrun %s: %v", ids[i], err)
					}
					time.Sleep(2 * time.Millisecond) // node full: wait for a job to end
				}
			}
		}(node)
	}
	wg.Wait()
	for {
		sel, err := cli.SelectJobs(&proto.SelectRequest{Criteria: []proto.Attr{{Name: proto.AttrJobState, Value: "F", Op: proto.OpNE}}})
		if err != nil {
			log.Fatal(err)
		}
		if len(sel) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	secs := time.Since(start).Seconds()

	fmt.Printf("%d /bin/true jobs through %d moms: %.2f s, %.0f jobs/s\n", jobs, moms, secs, float64(jobs)/secs)
}

// waitFinished polls until job id is history.
func waitFinished(c *proto.Client, id string) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		objs, _, err := c.StatusJobs(&proto.StatusRequest{IDs: []string{id}, History: true, Attrs: []string{proto.AttrJobState}})
		if err != nil {
			log.Fatal(err)
		}
		if len(objs) == 1 {
			if st, _ := objs[0].Get(proto.AttrJobState); st == "F" {
				return
			}
		}
	}
	log.Fatalf("job %s did not finish", id)
}
