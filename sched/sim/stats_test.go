package sim

import (
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestExactSum: the sum is the exact sum rounded once, whatever the
// order of the values.
func TestExactSum(t *testing.T) {
	t.Parallel()
	var s exactSum
	for range 10 {
		s.add(0.1)
	}
	if s.value() != 1 {
		t.Errorf("ten times 0.1: %v", s.value())
	}
	s = exactSum{}
	for _, x := range []float64{1e100, 1, -1e100, 1e-100} {
		s.add(x)
	}
	if s.value() != 1 {
		t.Errorf("cancellation: %v", s.value())
	}
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 5000)
	exact := new(big.Float).SetPrec(4096)
	for i := range xs {
		xs[i] = max(1, r.ExpFloat64()*100) * math.Pow(10, float64(r.IntN(6)))
		exact.Add(exact, new(big.Float).SetFloat64(xs[i]))
	}
	want, _ := exact.Float64()
	for range 5 {
		r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		s = exactSum{}
		for _, x := range xs {
			s.add(x)
		}
		if s.value() != want {
			t.Fatalf("sum %v, want %v", s.value(), want)
		}
	}
}

// stepExact integrates changes over n parts of [first, last) the way the
// plots did from a list of every outcome.
func stepExact(ch [][2]int64, first, last int64, n int) []float64 {
	out := make([]float64, n)
	width := float64(last-first) / float64(n)
	for b := range n {
		lo, hi := first+int64(float64(b)*width), first+int64(float64(b+1)*width)
		if b == 0 {
			lo = first
		}
		area := 0.0
		for _, c := range ch {
			// A change of d at c[0] adds d over [c[0], inf).
			area += float64(c[1]) * float64(max(0, hi-max(lo, c[0])))
		}
		out[b] = area / max(width, 1)
	}
	return out
}

// TestStepSeries: changes in any order; exact while the span fits the
// bins at a width of one second, within a few percent of a bin's
// neighbourhood after the bins have been merged.
func TestStepSeries(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for _, span := range []int64{300, 5000, 8000, 10_000_000, 3_000_000_000} {
		var ch [][2]int64
		first := int64(1000)
		for range 2000 {
			start := first + r.Int64N(span)
			end := min(first+span, start+r.Int64N(span/20+1))
			p := int64(1 + r.IntN(8))
			ch = append(ch, [2]int64{start, p}, [2]int64{end, -p})
		}
		var s stepSeries
		for _, i := range r.Perm(len(ch)) {
			s.add(ch[i][0], float64(ch[i][1]))
		}
		got := s.averages(first, first+span, 400)
		want := stepExact(ch, first, first+span, 400)
		if span < seriesBins {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("span %d: not exact\n got %v\nwant %v", span, got, want)
			}
			continue
		}
		top := 0.0
		for _, v := range want {
			top = max(top, v)
		}
		for b := range got {
			if math.Abs(got[b]-want[b]) > 0.1*top {
				t.Errorf("span %d: bin %d: %v, want %v", span, b, got[b], want[b])
			}
		}
		if s.width > span/seriesBins*2+1 {
			t.Errorf("span %d: width %d", span, s.width)
		}
	}
	var empty stepSeries
	if got := empty.averages(0, 10, 4); !reflect.DeepEqual(got, []float64{0, 0, 0, 0}) {
		t.Errorf("empty: %v", got)
	}
}

// TestStatsOrder: the metrics and plots do not depend on the order the
// outcomes come in.
func TestStatsOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	var jobs []Job
	var outs []Outcome
	for i := range 3000 {
		j := Job{Submit: r.Int64N(1_000_000), Run: r.Int64N(50_000), Procs: 1 + r.IntN(16),
			User: string(rune('a' + r.IntN(20))), Queue: string(rune('p' + r.IntN(3)))}
		jobs = append(jobs, j)
		o := Outcome{Seq: i, Start: -1, End: -1}
		if i%100 != 7 {
			o.Start = j.Submit + r.Int64N(20_000)*r.Int64N(3)
			o.End = o.Start + j.Run
		}
		outs = append(outs, o)
	}
	jobs = append(jobs, Job{Submit: 5, Run: 1, Procs: 1, User: "big"})
	outs = append(outs, Outcome{Start: 5 + 1<<33, End: 6 + 1<<33}) // a wait past 2^32 s
	for i := range outs {
		outs[i].Job = &jobs[i]
	}
	m := Measure(outs, 64)
	plots := Plots(measured(outs, 64))
	if m.MaxWait != 1<<33 || m.NotStarted != 30 || m.Jobs != 2971 {
		t.Errorf("metrics %+v", m)
	}
	for range 3 {
		r.Shuffle(len(outs), func(i, j int) { outs[i], outs[j] = outs[j], outs[i] })
		if m2 := Measure(outs, 64); !reflect.DeepEqual(m2, m) {
			t.Fatalf("shuffled: %+v\nwant %+v", m2, m)
		}
		if p2 := Plots(measured(outs, 64)); !reflect.DeepEqual(p2, plots) {
			t.Fatal("shuffled: other plots")
		}
	}
}

func measured(outs []Outcome, procs int) *Stats {
	s := NewStats(procs)
	for _, o := range outs {
		s.Add(o)
	}
	return s
}
