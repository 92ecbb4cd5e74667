package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// drain reads a stream to the end.
func drain(s *Stream) ([]Job, error) {
	var jobs []Job
	for {
		j, err := s.Next()
		if err == io.EOF {
			return jobs, nil
		}
		if err != nil {
			return jobs, err
		}
		jobs = append(jobs, j)
	}
}

// streamed reads in with a stream of the given window on procs processors.
func streamed(in string, window, procs int) (*Stream, []Job, error) {
	s, err := NewStream(strings.NewReader(in))
	if err != nil {
		return nil, nil, err
	}
	s.window = window
	if err := s.Normalize(procs); err != nil {
		return nil, nil, err
	}
	jobs, err := drain(s)
	return s, jobs, err
}

// sameAsWhole checks that a stream gave what ReadSWF and Normalize give.
func sameAsWhole(t *testing.T, in string, procs int, s *Stream, jobs []Job) {
	t.Helper()
	w, err := ReadSWF(strings.NewReader(in))
	if err != nil {
		t.Fatalf("ReadSWF: %v", err)
	}
	if err := Normalize(w, procs); err != nil {
		t.Fatal(err)
	}
	if len(jobs) != len(w.Jobs) || len(jobs) > 0 && !reflect.DeepEqual(jobs, w.Jobs) {
		t.Fatalf("streamed\n%+v\nwhole\n%+v", jobs, w.Jobs)
	}
	if s.Workload.Dropped != w.Dropped || s.Workload.UnixStartTime != w.UnixStartTime || s.Workload.MaxProcs != w.MaxProcs ||
		s.Yielded() != len(jobs) {
		t.Fatalf("streamed: %d dropped, start %d, %d procs; whole: %d, %d, %d",
			s.Workload.Dropped, s.Workload.UnixStartTime, s.Workload.MaxProcs, w.Dropped, w.UnixStartTime, w.MaxProcs)
	}
}

// TestStreamTraceFiles: streaming the real traces gives, job for job,
// what Load and Normalize give.
func TestStreamTraceFiles(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"KTH-SP2-1996-2.1-cln.swf.gz", "HPC2N-2002-2.1-cln.swf.gz", "NASA-iPSC-1993-3.1-cln.swf.gz", "wagap-2013.swf"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(traceDir, file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("trace not available: %v", err)
			}
			w := loadNormalized(t, file)
			s, err := OpenStream(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Normalize(0); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Workload.Machines, w.Machines) || s.Workload.MaxNodes != w.MaxNodes {
				t.Errorf("machines %+v (%d nodes), want %+v (%d)", s.Workload.Machines, s.Workload.MaxNodes, w.Machines, w.MaxNodes)
			}
			n := 0
			for ; ; n++ {
				j, err := s.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if n >= len(w.Jobs) || j != w.Jobs[n] {
					t.Fatalf("job %d: %+v, want %+v", n, j, w.Jobs[min(n, len(w.Jobs)-1)])
				}
			}
			if n != len(w.Jobs) || s.Workload.Dropped != w.Dropped || s.Workload.UnixStartTime != w.UnixStartTime || s.Workload.MaxProcs != w.MaxProcs {
				t.Errorf("%d jobs, %d dropped, start %d, %d procs; want %d, %d, %d, %d", n, s.Workload.Dropped,
					s.Workload.UnixStartTime, s.Workload.MaxProcs, len(w.Jobs), w.Dropped, w.UnixStartTime, w.MaxProcs)
			}
		})
	}
}

// swfLine is a job line: id, submit, run, processors.
func swfLine(id, submit, run, procs int64) string {
	return fmt.Sprintf("%d %d -1 %d %d -1 -1 %d 100 -1 1 1 1 -1 -1 -1 -1 -1\n", id, submit, run, procs, procs)
}

// TestStreamOrder: a trace out of order within the window streams as
// Normalize sorts it; beyond the window, or against the time base already
// used, it is ErrNotStreamable.
func TestStreamOrder(t *testing.T) {
	t.Parallel()
	var near strings.Builder // each job at most 2 places late
	near.WriteString("; MaxProcs: 4\n")
	for i, sub := range []int64{5, 3, 4, 1, 9, 9, 7, 8, 8, 20, 20} {
		near.WriteString(swfLine(int64(i+1), sub, 10, 1))
	}
	near.WriteString(swfLine(99, 0, -1, 1)) // dropped (no run time): its order does not matter
	near.WriteString(swfLine(98, -1, 5, 1)) // unknown submit: dropped
	s, jobs, err := streamed(near.String(), 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameAsWhole(t, near.String(), 0, s, jobs)

	_, _, err = streamed(near.String(), 2, 0)
	if !errors.Is(err, ErrNotStreamable) || !strings.Contains(err.Error(), "line 5: trace cannot be replayed in one pass: job 4 submitted at 1") {
		t.Errorf("window 2: %v", err)
	}

	// Unix times: the base is the earliest submit, also of a dropped job.
	unix := swfLine(1, 1356996147, 5, 1) + swfLine(2, 1356996100, -1, 1) + swfLine(3, 1356996200, 5, 1)
	s, jobs, err = streamed(unix, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	sameAsWhole(t, unix, 4, s, jobs)
	if jobs[0].Submit != 47 {
		t.Errorf("first submit %d", jobs[0].Submit)
	}
	unix += swfLine(4, 1356996000, -1, 1) // would move the base of jobs already replayed
	if _, _, err := streamed(unix, 1, 4); !errors.Is(err, ErrNotStreamable) || !strings.Contains(err.Error(), "before the trace's start 1356996100") {
		t.Errorf("earlier base: %v", err)
	}
	if _, _, err := streamed(unix, 4, 4); err != nil {
		t.Errorf("earlier base within the window: %v", err)
	}

	late := "; MaxProcs: 4\n" + swfLine(1, 0, 5, 1) + "; MaxProcs: 8\n" + swfLine(2, 0, 5, 1)
	if _, _, err := streamed(late, 4, 0); !errors.Is(err, ErrNotStreamable) || !strings.Contains(err.Error(), "line 4:") {
		t.Errorf("late header: %v", err)
	}
	if _, _, err := streamed("1 2 3\n", 4, 4); err == nil || errors.Is(err, ErrNotStreamable) || !strings.Contains(err.Error(), "line 1: 3 fields") {
		t.Errorf("bad line: %v", err)
	}
	if s, err := NewStream(strings.NewReader(swfLine(1, 0, 5, 1))); err != nil || s.Normalize(0) == nil {
		t.Errorf("no machine size: %v", err)
	}
}

// FuzzStream: any input a stream reads to the end gives what ReadSWF and
// Normalize give; one ReadSWF reads, a stream reads to the end or refuses
// as ErrNotStreamable.
func FuzzStream(f *testing.F) {
	f.Add([]byte(swfSample), uint8(2))
	f.Add(gz(swfSample), uint8(0))
	f.Add([]byte("; MaxProcs: 4\n"+swfLine(1, 5, 1, 1)+swfLine(2, 3, 1, 1)+swfLine(3, -1, 1, 1)+swfLine(4, 1, 1, 9)), uint8(1))
	f.Add([]byte(swfLine(1, 1356996147, 5, 1)+swfLine(2, 1356996100, -1, 1)+swfLine(3, 1356996000, 5, 1)), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, window uint8) {
		w, werr := ReadSWF(bytes.NewReader(in))
		s, err := NewStream(bytes.NewReader(in))
		var jobs []Job
		if err == nil {
			s.window = int(window % 8)
			if err = s.Normalize(64); err == nil {
				jobs, err = drain(s)
			}
		}
		switch {
		case err == nil && werr != nil:
			t.Fatalf("streamed, but ReadSWF: %v", werr)
		case err == nil:
			sameAsWhole(t, string(in), 64, s, jobs)
		case werr == nil && !errors.Is(err, ErrNotStreamable):
			t.Fatalf("ReadSWF read %d jobs, the stream failed: %v", len(w.Jobs), err)
		}
	})
}

func TestMemoryStream(t *testing.T) {
	t.Parallel()
	in := "; MaxProcs: 4\n" + swfLine(1, 5, 1, 1) + swfLine(2, 3, 1, 1) + swfLine(3, 4, 1, 9)
	w, err := ReadSWF(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	s := MemoryStream(w)
	if _, err := s.Next(); err == nil {
		t.Error("Next before Normalize")
	}
	if err := s.Normalize(0); err != nil {
		t.Fatal(err)
	}
	jobs, err := drain(s)
	if err != nil {
		t.Fatal(err)
	}
	sameAsWhole(t, in, 0, s, jobs)
}
