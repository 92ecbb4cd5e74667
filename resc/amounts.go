package resc

// Amounts are resources by name as numbers: counts (ncpus, ngpus), bytes
// (mem, vmem) and seconds (walltime, cput). Parsed once from their text,
// they are what placement, limits and sort keys compare.
type Amounts map[string]float64

// Clone copies a.
func (a Amounts) Clone() Amounts {
	out := make(Amounts, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}

// Fits reports whether every positive amount of want is within a.
func (a Amounts) Fits(want Amounts) bool {
	if len(want) == 1 {
		// Most requests are cpus alone: two lookups cost less than a
		// walk of the map.
		if v, ok := want["ncpus"]; ok {
			return !(v > 0 && a["ncpus"] < v)
		}
	}
	for k, v := range want {
		if v > 0 && a[k] < v {
			return false
		}
	}
	return true
}

// AddTimes adds n times b to a.
func (a Amounts) AddTimes(b Amounts, n float64) {
	for k, v := range b {
		a[k] += v * n
	}
}
