package main

import (
	"math"
	"testing"

	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// The peer's figures come from its RESULT STORM line only; a NaN (no
// sample) is kept as NaN, and what is not a number is left out.
func TestAddStormPeer(t *testing.T) {
	peer := map[string][]float64{}
	addStormPeer(peer, "# a note quiet_submit_p50_s=9\nRESULT B1 quiet_submit_p50_s=8\nRESULT STORM jobs=10000 quiet_submit_p50_s=0.018 poll_submit_p50_s=NaN bad=x novalue\nSUMMARY peer=slurm\n")
	addStormPeer(peer, "RESULT STORM quiet_submit_p50_s=0.020\n")
	if got := peer["quiet_submit_p50_s"]; len(got) != 2 || got[0] != 0.018 || got[1] != 0.020 {
		t.Errorf("quiet_submit_p50_s = %v, want [0.018 0.02]", got)
	}
	if got := peer["poll_submit_p50_s"]; len(got) != 1 || !math.IsNaN(got[0]) {
		t.Errorf("poll_submit_p50_s = %v, want [NaN]", got)
	}
	if _, ok := peer["bad"]; ok {
		t.Errorf("a value that is no number was kept: %v", peer)
	}
	if got := peer["jobs"]; len(got) != 1 || got[0] != 10000 {
		t.Errorf("jobs = %v", got)
	}
}

func FuzzAddStormPeer(f *testing.F) {
	f.Add("RESULT STORM quiet_submit_p50_s=0.018 poll_poll_p99_s=NaN\n")
	f.Add("RESULT STORM =1 a== b=1e309\n")
	f.Fuzz(func(t *testing.T, out string) {
		addStormPeer(map[string][]float64{}, out)
	})
}

// quantile is nearest-rank, as the peer script's awk computes it.
func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ p, want float64 }{{0.5, 5}, {0.99, 10}, {0.1, 1}, {0.11, 2}, {0, 1}, {1, 10}} {
		if got := quantile(v, c.p); got != c.want {
			t.Errorf("quantile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if !math.IsNaN(quantile(nil, 0.5)) {
		t.Errorf("quantile of nothing is not NaN")
	}
}

// reqStats sums a request type's histogram over windows and finds the
// bucket of the 99th percentile; other types' series are not counted.
func TestReqStats(t *testing.T) {
	name := metrics.ServerRequestSeconds
	sample := func(submit map[string]float64, n, sum float64) testcluster.Samples {
		s := testcluster.Samples{
			testcluster.SeriesKey(name+"_count", "type", proto.MsgSubmit.String()):                    n,
			testcluster.SeriesKey(name+"_sum", "type", proto.MsgSubmit.String()):                      sum,
			testcluster.SeriesKey(name+"_bucket", "le", "0.001", "type", proto.MsgStatusJob.String()): 1000,
		}
		for le, v := range submit {
			s[testcluster.SeriesKey(name+"_bucket", "le", le, "type", proto.MsgSubmit.String())] = v
		}
		return s
	}
	var r reqStats
	// 100 submissions, 98 of them within 1 ms, 99 within 10 ms.
	r.add(sample(map[string]float64{"0.001": 0, "0.01": 0, "+Inf": 0}, 0, 0),
		sample(map[string]float64{"0.001": 98, "0.01": 99, "+Inf": 100}, 100, 0.5), proto.MsgSubmit)
	if r.n != 100 || r.sum != 0.5 || r.p99() != 0.01 {
		t.Fatalf("after one window: n %v sum %v p99 %v, want 100 0.5 0.01", r.n, r.sum, r.p99())
	}
	// 100 more, all within 1 ms: 198 of 200 within 1 ms, so p99 is too.
	r.add(sample(map[string]float64{"0.001": 98, "0.01": 99, "+Inf": 100}, 100, 0.5),
		sample(map[string]float64{"0.001": 198, "0.01": 199, "+Inf": 200}, 200, 0.6), proto.MsgSubmit)
	if r.n != 200 || math.Abs(r.sum-0.6) > 1e-9 || r.p99() != 0.001 {
		t.Fatalf("after two windows: n %v sum %v p99 %v, want 200 0.6 0.001", r.n, r.sum, r.p99())
	}
}
