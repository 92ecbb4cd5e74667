package main

import (
	"fmt"
	"log"
	"sort"
	"sync"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// The event stream at scale (issue 24): subscribers on the server's
// socket, each following every change (the heaviest fan-out: no filter),
// while a driver ends queued jobs one at a time with qdel, paced. For
// each end it records when the qdel was sent and when each subscriber
// received the job's F; the latency is the second less the first (so it
// includes the commit). The server's cpu time over the run, divided by
// the ends, is its cost per event; the same run without subscribers gives
// the cost of the qdel itself.
func streamExperiment(subscribers, ends int, gap time.Duration) {
	fmt.Printf("| subscribers | job ends | latency p50 | p99 | max | server cpu per end | of which the stream |\n|---|---|---|---|---|---|---|\n")
	base := streamRun(0, ends, gap, nil)
	fmt.Printf("| 0 | %d | - | - | - | %.3f ms | - |\n", ends, base.Seconds()*1000/float64(ends))
	var lat []time.Duration
	cpu := streamRun(subscribers, ends, gap, &lat)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) string {
		return fmt.Sprintf("%.1f ms", float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds())/1000)
	}
	per := cpu.Seconds() * 1000 / float64(ends)
	fmt.Printf("| %d | %d | %s | %s | %s | %.3f ms | %.3f ms (%.2f µs per delivery) |\n", subscribers, ends, q(0.5), q(0.99), q(1),
		per, per-base.Seconds()*1000/float64(ends), (cpu-base).Seconds()*1e6/float64(ends*max(subscribers, 1)))
}

// streamRun runs one experiment on a fresh server and returns its cpu
// time over the ends; with lat it collects every delivery's latency.
func streamRun(subscribers, ends int, gap time.Duration, lat *[]time.Duration) time.Duration {
	tb := &benchTB{}
	defer tb.cleanup()
	cl := testcluster.New(tb, testcluster.Options{ServerArgs: []string{"-log-level", "warn"}})
	driver := dialUnix(tb, cl)
	defer driver.Close()
	ids := make([]string, ends)
	for i := range ids {
		id, err := driver.Submit(&proto.SubmitRequest{Script: []byte("#!/bin/sh\n"), Attrs: []proto.Attr{{Name: proto.AttrHoldTypes, Value: "u"}}})
		if err != nil {
			tb.Fatalf("submit: %v", err)
		}
		ids[i] = id
	}
	index := make(map[string]int, ends)
	for i, id := range ids {
		index[id] = i
	}
	sent := make([]time.Time, ends)
	var sentMu sync.RWMutex
	var mu sync.Mutex
	var wg sync.WaitGroup
	streams := make([]*proto.EventStream, subscribers)
	for s := range streams {
		st, err := dialUnix(tb, cl).Subscribe(&proto.SubscribeRequest{})
		if err != nil {
			tb.Fatalf("subscriber %d: %v", s, err)
		}
		streams[s] = st
	}
	for _, st := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer st.Close()
			got := 0
			mine := make([]time.Duration, 0, ends)
			for got < ends {
				evs, err := st.Next()
				if err != nil {
					log.Fatalf("subscriber: %v", err)
				}
				now := time.Now()
				for _, e := range evs {
					if e.State != "F" {
						continue
					}
					sentMu.RLock()
					at := sent[index[e.JobID]]
					sentMu.RUnlock()
					mine = append(mine, now.Sub(at))
					got++
				}
			}
			mu.Lock()
			*lat = append(*lat, mine...)
			mu.Unlock()
		}()
	}
	cpu0 := treeCPU(tb, cl.ServerPid())
	next := time.Now()
	for i, id := range ids {
		time.Sleep(time.Until(next))
		next = next.Add(gap)
		sentMu.Lock()
		sent[i] = time.Now()
		sentMu.Unlock()
		if err := driver.DeleteJob(id, proto.DeleteOptions{KillDelay: proto.NoKillDelay}); err != nil {
			tb.Fatalf("qdel %s: %v", id, err)
		}
	}
	wg.Wait()
	cpu := treeCPU(tb, cl.ServerPid()) - cpu0
	log.Printf("stream: %d subscribers, %d ends %v apart: server cpu %v", subscribers, ends, gap, cpu)
	return cpu
}
