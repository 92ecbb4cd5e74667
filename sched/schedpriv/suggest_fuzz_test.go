package schedpriv

import "testing"

// editDistance is a metric-like measure whatever the input: zero exactly
// for equal strings, symmetric, at most the longer length, at least the
// difference in lengths; closest never returns a name it was not given.
func FuzzEditDistance(f *testing.F) {
	f.Add("round_robbin", "round_robin")
	f.Add("", "by_queue")
	f.Add("ab\x00", "\x00ba")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 200 || len(b) > 200 {
			return
		}
		d := editDistance(a, b)
		if (d == 0) != (a == b) {
			t.Fatalf("editDistance(%q, %q) = %d", a, b, d)
		}
		if d != editDistance(b, a) {
			t.Fatalf("not symmetric for %q, %q", a, b)
		}
		if d > max(len(a), len(b)) || d < max(len(a)-len(b), len(b)-len(a)) {
			t.Fatalf("editDistance(%q, %q) = %d out of bounds", a, b, d)
		}
		if got := closest(a, []string{b}); got != "" && got != b {
			t.Fatalf("closest returned %q", got)
		}
	})
}
