package sim

import "math"

// exactSum adds float64 values without rounding error (Shewchuk's
// algorithm, as Python's math.fsum): its value is the exact sum rounded
// once, so a metric summed as jobs finish, in whatever order, is the same
// number. A sum of whole numbers below 2^53 (waits, processor-seconds) is
// what plain addition gives; a sum of slowdowns may differ from a plain
// left-to-right sum in its last digits, that sum's rounding error.
type exactSum struct {
	// partials are non-overlapping, by increasing magnitude; their exact
	// sum is the sum so far. There are a handful (at most ~40).
	partials []float64
}

func (s *exactSum) add(x float64) {
	i := 0
	for _, y := range s.partials {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			s.partials[i] = lo
			i++
		}
		x = hi
	}
	s.partials = append(s.partials[:i], x)
}

// value is the sum rounded to the nearest float64 (ties to even). The
// values added must be finite.
func (s *exactSum) value() float64 {
	p := s.partials
	n := len(p)
	if n == 0 {
		return 0
	}
	n--
	hi, lo := p[n], 0.0
	for n > 0 {
		x := hi
		n--
		y := p[n]
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// Half-way cases: hi + lo rounded to even may not be hi when the
	// partials below lo push it past the half-way point.
	if n > 0 && (lo < 0 && p[n-1] < 0 || lo > 0 && p[n-1] > 0) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}
