package server

import (
	"testing"

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
