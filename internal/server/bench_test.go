package server

import (
	"fmt"
	"testing"

	"gopbs/internal/model"

	"gopbs/internal/store"
	"gopbs/proto"
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
	var vn []proto.VnodeStatus
	s.mu.Lock()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("s%06d", i)
		o := model.NewObject(name)
		o.Set(proto.AttrNodeMom, "", "sim")
		o.Set(proto.AttrNodePort, "", "1")
		s.nodes[name] = o
		vn = append(vn, proto.VnodeStatus{Name: name, Ncpus: 10, Physmem: 64 << 30})
	}
	o := model.NewObject("simhost")
	o.Set(proto.AttrNodeMom, "", "sim")
	o.Set(proto.AttrNodePort, "", "1")
	s.nodes["simhost"] = o
	s.mu.Unlock()
	if _, err := s.momStatus(&caller{name: "simhost", role: proto.RoleMom}, &proto.MomStatus{Node: "simhost", Vnodes: vn, IdealLoad: -1, MaxLoad: -1}); err != nil {
		b.Fatal(err)
	}
	req := &proto.SubmitRequest{Script: []byte("#!/bin/sh\n"), Attrs: []proto.Attr{{Name: proto.AttrResourceList, Resource: "select", Value: "1:ncpus=1"}}}
	for i := 0; i < n; i++ {
		if _, err := c.Submit(req); err != nil {
			b.Fatal(err)
		}
	}
	return s, c
}

// BenchmarkSnapshotFetch is what a scheduler reads each cycle: every node
// and every job, over the real socket.
func BenchmarkSnapshotFetch(b *testing.B) {
	_, c := benchCluster(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nodes, _, err := c.StatusNodes(&proto.StatusRequest{Attrs: []string{"state", "resources_available", "resources_assigned", "loadave", "max_load", "ideal_load", "ntype"}})
		if err != nil || len(nodes) != 10001 {
			b.Fatal(err, len(nodes))
		}
		jobs, _, err := c.StatusJobs(&proto.StatusRequest{Attrs: []string{"Job_Name", "Job_Owner", "euser", "egroup", "job_state", "queue", "Priority", "ctime", "qtime", "etime", "comment", "Hold_Types", "exec_host", "exec_vnode", "Resource_List", "resources_used"}})
		if err != nil || len(jobs) != 10000 {
			b.Fatal(err, len(jobs))
		}
	}
}
