package server

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/qsubopt"

	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// BenchmarkSubmit measures one client's durable submissions through the
// real socket and store (go test -bench Submit ./internal/server).
func BenchmarkSubmit(b *testing.B) {
	_, c := newTestServer(&testing.T{}, store.Options{})
	req := &proto.SubmitRequest{Script: []byte("#!/bin/sh\n/bin/true\n"), Attrs: []proto.Attr{{Name: proto.AttrJobName, Value: "bench"}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Submit(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTrip is a request that touches no store: the cost of the
// socket, framing and dispatch.
func BenchmarkRoundTrip(b *testing.B) {
	_, c := newTestServer(&testing.T{}, store.Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.WhoAmI(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCluster is a server with n simulated nodes that have reported and
// n queued one-cpu jobs, for status benchmarks.
func benchCluster(b *testing.B, n int) (*Server, *proto.Client) {
	s, c := newTestServer(&testing.T{}, store.Options{})
	benchNodes(b, s, n)
	req := &proto.SubmitRequest{Script: []byte("#!/bin/sh\n"), Attrs: []proto.Attr{{Name: proto.AttrResourceList, Resource: "select", Value: "1:ncpus=1"}}}
	for i := 0; i < n; i++ {
		if _, err := c.Submit(req); err != nil {
			b.Fatal(err)
		}
	}
	return s, c
}

// benchNodes gives s n nodes of 10 cpus (s000000...), reported as the
// vnodes of node simhost, whose fake mom accepts every start.
func benchNodes(b *testing.B, s *Server, n int) {
	port := strconv.Itoa(fakeMom(b, s.key))
	var vn []proto.VnodeStatus
	s.mu.Lock()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("s%06d", i)
		o := model.NewObject(name)
		o.Set(proto.AttrNodeMom, "", "127.0.0.1")
		o.Set(proto.AttrNodePort, "", port)
		s.nodes.Put(o)
		vn = append(vn, proto.VnodeStatus{Name: name, Ncpus: 10, Physmem: 64 << 30})
	}
	o := model.NewObject("simhost")
	o.Set(proto.AttrNodeMom, "", "127.0.0.1")
	o.Set(proto.AttrNodePort, "", port)
	s.nodes.Put(o)
	s.mu.Unlock()
	if _, err := s.momStatus(&caller{name: "simhost", role: proto.RoleMom}, &proto.MomStatus{Node: "simhost", Vnodes: vn, IdealLoad: -1, MaxLoad: -1}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSnapshotFetch is what a scheduler reads each cycle: every node
// and every job, over the real socket.
func BenchmarkSnapshotFetch(b *testing.B) {
	const n = 20000
	_, c := benchCluster(b, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nodes, _, err := c.StatusNodes(&proto.StatusRequest{Attrs: []string{"state", "resources_available", "resources_assigned", "loadave", "max_load", "ideal_load", "ntype"}})
		if err != nil || len(nodes) != n+1 {
			b.Fatal(err, len(nodes))
		}
		jobs, _, err := c.StatusJobs(&proto.StatusRequest{Attrs: []string{"Job_Owner", "euser", "egroup", "job_state", "queue", "Priority", "qtime", "comment", "Resource_List"}})
		if err != nil || len(jobs) != n {
			b.Fatal(err, len(jobs))
		}
	}
}

// fakeMom accepts job starts for every node without running anything.
func fakeMom(b *testing.B, key []byte) int {
	return serveFakeMom(b, key, func(h proto.Header, body msgpack.RawMessage) (proto.Header, any) {
		var jobs proto.MomJobs
		proto.DecodeBody(body, &jobs)
		return proto.Header{Type: proto.MsgReply, Seq: h.Seq}, &proto.MomJobsReply{Results: make([]proto.ObjectError, len(jobs.Jobs))}
	})
}

// BenchmarkRunJobs starts 10,000 queued jobs on 10,000 nodes in one
// request, as a scheduler's cycle does.
func BenchmarkRunJobs(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, c := benchCluster(b, 10000)
		ids, err := c.SelectJobs(&proto.SelectRequest{})
		if err != nil {
			b.Fatal(err)
		}
		runs := make([]proto.RunSpec, len(ids))
		for k, id := range ids {
			runs[k] = proto.RunSpec{JobID: id, Nodes: fmt.Sprintf("s%06d", k)}
		}
		b.StartTimer()
		res, err := c.RunJobs(runs)
		if err != nil || len(res) != len(runs) || res[0].Code != 0 {
			b.Fatal(err, len(res), res[0])
		}
	}
}

// BenchmarkQueuedJobMemory reports the server's live heap per queued job
// (B/job): jobs submitted as qsub submits them from a user's shell, the
// heap measured after a collection before and after. b.N is ignored; run
// with -benchtime 1x.
func BenchmarkQueuedJobMemory(b *testing.B) {
	const n = 20000
	s, c := newTestServer(&testing.T{}, store.Options{})
	env := []string{"HOME=/home/alice", "LOGNAME=alice", "USER=alice", "LANG=C.UTF-8", "MAIL=/var/mail/alice", "SHELL=/bin/bash",
		"PATH=/home/alice/.local/bin:/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"}
	sub, err := qsubopt.ParseSubmit([]string{"job.sh"}, qsubopt.Context{Environ: env, Cwd: "/home/alice/project", Host: "login1", Now: time.Now(),
		ReadFile: func(string) ([]byte, error) {
			return []byte("#!/bin/sh\n#PBS -l walltime=1:00:00\n./simulate --input data.in\n"), nil
		}})
	if err != nil {
		b.Fatal(err)
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	submitConcurrently(b, s, 16, n, func(int) *proto.SubmitRequest { return sub.Request })
	after := heap()
	b.ReportMetric(float64(after-before)/n, "B/job")
	runtime.KeepAlive(c)
}

// submitConcurrently submits n jobs, req(i) for i in 0..n-1, from clients
// connections to s's socket at once (their commits shared).
func submitConcurrently(b *testing.B, s *Server, clients, n int, req func(i int) *proto.SubmitRequest) {
	var wg sync.WaitGroup
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := proto.Dial(proto.DialOptions{Network: "unix", Address: s.cfg.SocketPath})
			if err != nil {
				b.Error(err)
				return
			}
			defer cl.Close()
			for i := w; i < n; i += clients {
				if _, err := cl.Submit(req(i)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}
