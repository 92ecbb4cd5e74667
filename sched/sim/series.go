package sim

// seriesBins is the resolution of a stepSeries: the plots' 400 points
// each average over at least 20 of its bins.
const seriesBins = 8192

// stepSeries integrates a step function given by its changes (time,
// delta), which may come in any order (a job's start is known when it
// ends), in a fixed amount of memory: seriesBins bins of a width that
// doubles, merging neighbours, whenever the changes span more than the
// bins cover. A bin keeps the sum of its changes and their first moment,
// which is what the integral needs, so the integral at every bin edge is
// exact; inside a bin it is interpolated.
type stepSeries struct {
	width  int64 // seconds per bin, a power of two
	start  int64 // global index of bins 0: bin g covers [g*width, (g+1)*width)
	lo, hi int64 // global indices of the first and last bins with a change
	// d and m hold per bin the sum of the changes and of change x (time -
	// the bin's start).
	d, m []float64
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// add records that the step function changes by delta at t.
func (s *stepSeries) add(t int64, delta float64) {
	if s.d == nil {
		s.width, s.start, s.lo, s.hi = 1, t, t, t
		s.d, s.m = make([]float64, seriesBins), make([]float64, seriesBins)
	}
	g := floorDiv(t, s.width)
	for max(s.hi, g)-min(s.lo, g) >= seriesBins {
		s.coarsen()
		g = floorDiv(t, s.width)
	}
	lo, hi := min(s.lo, g), max(s.hi, g)
	if lo < s.start || hi >= s.start+seriesBins {
		// Room on the side the changes grow: time runs forward, so to the
		// right, but a replay's first outcomes may not be its earliest.
		start := lo
		if lo < s.start {
			start = lo - (seriesBins-(hi-lo+1))/2
		}
		s.move(start)
	}
	s.lo, s.hi = lo, hi
	i := g - s.start
	s.d[i] += delta
	s.m[i] += delta * float64(t-g*s.width)
}

// move places the bins so that bin 0 is global index start.
func (s *stepSeries) move(start int64) {
	d, m := make([]float64, seriesBins), make([]float64, seriesBins)
	for g := s.lo; g <= s.hi; g++ {
		d[g-start], m[g-start] = s.d[g-s.start], s.m[g-s.start]
	}
	s.d, s.m, s.start = d, m, start
}

// coarsen doubles the width, merging bins 2k and 2k+1 into bin k.
func (s *stepSeries) coarsen() {
	d, m := make([]float64, seriesBins), make([]float64, seriesBins)
	start := floorDiv(s.start, 2)
	for g := s.lo; g <= s.hi; g++ {
		k := floorDiv(g, 2)
		i := g - s.start
		d[k-start] += s.d[i]
		m[k-start] += s.m[i] + s.d[i]*float64((g-2*k)*s.width)
	}
	s.d, s.m, s.start = d, m, start
	s.lo, s.hi = floorDiv(s.lo, 2), floorDiv(s.hi, 2)
	s.width *= 2
}

// averages returns the step function's average over n equal parts of
// [first, last), the parts' edges rounded down to whole seconds as the
// plots have always drawn them.
func (s *stepSeries) averages(first, last int64, n int) []float64 {
	out := make([]float64, n)
	if s.d == nil {
		return out
	}
	// edge[k] is the integral up to the start of bin lo+k, level[k] the
	// function's value there.
	bins := int(s.hi - s.lo + 1)
	edge, level := make([]float64, bins+1), make([]float64, bins+1)
	w := float64(s.width)
	for k := range bins {
		i := s.lo + int64(k) - s.start
		edge[k+1] = edge[k] + level[k]*w + s.d[i]*w - s.m[i]
		level[k+1] = level[k] + s.d[i]
	}
	integral := func(t int64) float64 {
		g := floorDiv(t, s.width)
		switch {
		case g < s.lo:
			return 0
		case g > s.hi:
			return edge[bins] + level[bins]*float64(t-(s.hi+1)*s.width)
		}
		k := g - s.lo
		x := float64(t-g*s.width) / w
		return edge[k] + (edge[k+1]-edge[k])*x
	}
	width := float64(last-first) / float64(n)
	prev := integral(first)
	for b := range n {
		end := first + int64(float64(b+1)*width)
		next := integral(end)
		out[b] = (next - prev) / max(width, 1)
		prev = next
	}
	return out
}
