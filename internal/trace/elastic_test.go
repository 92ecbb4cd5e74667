package trace

import (
	"bytes"
	"strings"
	"testing"
)

// elasticLine is a valid 18-field job line the elastic tests extend.
const elasticLine = "7 120 -1 600 8 -1 -1 8 900 -1 1 3 1 -1 -1 -1 -1 -1"

// TestReadSWFElastic: fields 19-20 give an elastic job's range, -1 -1 a
// rigid job; anything else is an error naming the line; Normalize caps
// the maximum at the machine and drops a job whose minimum is above it.
func TestReadSWFElastic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, fields string
		min, max     int
		err          string
	}{
		{"range", "4 16", 4, 16, ""},
		{"rigid", "-1 -1", 0, 0, ""},
		{"fixed size", "8 8", 8, 8, ""},
		{"tabs", "4\t16", 4, 16, ""},
		{"min above max", "16 4", 0, 0, "line 2: fields 19-20 (minimum and maximum processors): 16 4, want 1 <= minimum <= maximum"},
		{"zero minimum", "0 4", 0, 0, "line 2: fields 19-20"},
		{"one unknown", "-1 4", 0, 0, "line 2: fields 19-20"},
		{"not a number", "4 x", 0, 0, `line 2: fields 19-20 (minimum and maximum processors): "4" "x" are not integers`},
		{"decimal", "4 16.0", 0, 0, "are not integers"},
		{"too big", "1 99999999999999999999", 0, 0, "are not integers"},
		{"one field", "4", 0, 0, "line 2: 19 fields, want 18 (SWF), 20 (SWF with an elastic range) or 21"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := ReadSWF(strings.NewReader("; MaxProcs: 12\n" + elasticLine + " " + tc.fields + "\n"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if j := w.Jobs[0]; j.MinProcs != tc.min || j.MaxProcs != tc.max || j.Procs != 8 || j.Run != 600 {
				t.Fatalf("job %+v, want range %d-%d", j, tc.min, tc.max)
			}
			if err := Normalize(w, 0); err != nil {
				t.Fatal(err)
			}
			if wantMax := min(tc.max, 12); w.Jobs[0].MaxProcs != wantMax {
				t.Errorf("normalized maximum %d, want %d", w.Jobs[0].MaxProcs, wantMax)
			}
		})
	}
	// A mix of layouts; a minimum above the machine drops the job, in a
	// stream as in Normalize.
	in := "; MaxProcs: 12\n" + elasticLine + "\n" + elasticLine + " 13 20\n" + elasticLine + " 2 100\n"
	w, err := ReadSWF(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if err := Normalize(w, 0); err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) != 2 || w.Dropped != 1 || w.Jobs[0].MinProcs != 0 || w.Jobs[1].MinProcs != 2 || w.Jobs[1].MaxProcs != 12 {
		t.Fatalf("normalized: %+v, %d dropped", w.Jobs, w.Dropped)
	}
	s, err := NewStream(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Normalize(0); err != nil {
		t.Fatal(err)
	}
	var got []Job
	for {
		j, err := s.Next()
		if err != nil {
			break
		}
		got = append(got, j)
	}
	if len(got) != 2 || got[1] != w.Jobs[1] {
		t.Fatalf("streamed %+v, want %+v", got, w.Jobs)
	}
}

// FuzzReadSWFElastic: a job line with any two more fields reads as
// elastic exactly when they are integers 1 <= min <= max, as rigid when
// they are -1 -1, and is an error otherwise.
func FuzzReadSWFElastic(f *testing.F) {
	for _, seed := range [][2]string{{"4", "16"}, {"-1", "-1"}, {"16", "4"}, {"0", "0"}, {"1", "1"}, {"+3", "04"}, {"x", "1"}, {"-1", "2"}, {"9223372036854775807", "9223372036854775807"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, lo, hi string) {
		if lo == "" || hi == "" || strings.ContainsAny(lo+hi, " \t\r\n\v\f;") {
			return // not two fields
		}
		w, err := ReadSWF(bytes.NewReader([]byte(elasticLine + " " + lo + " " + hi + "\n")))
		// What an integer field is, the other fields' parser says.
		n, ok1 := parseInt([]byte(lo))
		m, ok2 := parseInt([]byte(hi))
		numbers := ok1 && ok2
		switch {
		case numbers && n == -1 && m == -1:
			if err != nil || w.Jobs[0].MinProcs != 0 || w.Jobs[0].MaxProcs != 0 {
				t.Fatalf("%q %q: %v %+v, want a rigid job", lo, hi, err, w)
			}
		case numbers && n >= 1 && m >= n && m < 1<<31:
			if err != nil || int64(w.Jobs[0].MinProcs) != n || int64(w.Jobs[0].MaxProcs) != m {
				t.Fatalf("%q %q: %v %+v, want range %d-%d", lo, hi, err, w, n, m)
			}
		default:
			if err == nil {
				t.Fatalf("%q %q read as %+v, want an error", lo, hi, w.Jobs)
			}
		}
	})
}
