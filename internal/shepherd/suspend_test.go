package shepherd

import "testing"

// Suspensions add up, the current one up to now; a resume without a
// suspend, or a second suspend, changes nothing.
func TestSuspension(t *testing.T) {
	dir := t.TempDir()
	if s := ReadSuspension(dir); s.At(100) != 0 {
		t.Fatalf("never suspended: %+v", s)
	}
	steps := []struct {
		suspend bool
		at      int64
		want    int64 // At(200)
	}{
		{true, 100, 100}, {true, 150, 100}, {false, 130, 30}, {false, 140, 30}, {true, 190, 40},
	}
	for _, st := range steps {
		s, err := NoteSuspension(dir, st.suspend, st.at)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.At(200); got != st.want {
			t.Errorf("after suspend=%v at %d: %d s suspended at 200, want %d", st.suspend, st.at, got, st.want)
		}
		if ReadSuspension(dir) != s {
			t.Errorf("file holds %+v, want %+v", ReadSuspension(dir), s)
		}
	}
}
