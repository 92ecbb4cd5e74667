package trace

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestTraceFiles reads the real traces of ../shared/traces (skipping
// those missing) and checks what the README says about them.
func TestTraceFiles(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file                    string
		read, jobs, procs, drop int
		start                   int64
	}{
		{"KTH-SP2-1996-2.1-cln.swf.gz", 27992, 27992, 100, 0, 843480031},
		{"HPC2N-2002-2.1-cln.swf.gz", 202876, 202876, 240, 0, 1027839845},
		{"NASA-iPSC-1993-3.1-cln.swf.gz", 18239, 18239, 128, 0, 749458803},
		// Alea's trace: no header; Unix submit times; two jobs with a
		// negative run time; the machine from the .machines file.
		{"wagap-2013.swf", 17900, 17898, 2176, 2, 1356996147},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(traceDir, c.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("trace not available: %v", err)
			}
			t0 := time.Now()
			w, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("read %d jobs in %v", len(w.Jobs), time.Since(t0))
			if len(w.Jobs) != c.read || w.UnixStartTime != c.start {
				t.Errorf("%d jobs, start %d", len(w.Jobs), w.UnixStartTime)
			}
			if err := Normalize(w, 0); err != nil {
				t.Fatal(err)
			}
			if len(w.Jobs) != c.jobs || w.MaxProcs != c.procs || w.Dropped != c.drop {
				t.Errorf("normalized: %d jobs of %d procs, %d dropped", len(w.Jobs), w.MaxProcs, w.Dropped)
			}
			if w.Jobs[0].Submit != 0 && c.file != "KTH-SP2-1996-2.1-cln.swf.gz" {
				t.Errorf("first submit %d", w.Jobs[0].Submit)
			}
			checkNormalized(t, w)
		})
	}
}

func TestWagap(t *testing.T) {
	t.Parallel()
	path := filepath.Join(traceDir, "wagap-2013.swf")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("trace not available: %v", err)
	}
	w, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Machine{
		{ID: 0, Name: "zewura", Nodes: 20, CPUsPerNode: 80, Speed: 1, MemKB: 529426432},
		{ID: 1, Name: "zegox", Nodes: 48, CPUsPerNode: 12, Speed: 1, MemKB: 94035968},
	}
	if len(w.Machines) != 2 || w.Machines[0] != want[0] || w.Machines[1] != want[1] || w.MaxNodes != 68 {
		t.Errorf("machines %+v, %d nodes", w.Machines, w.MaxNodes)
	}
	queues := map[string]int{}
	for _, j := range w.Jobs {
		queues[j.Queue]++
		if j.NodeSpec == "" {
			t.Fatalf("job %d without a node spec", j.ID)
		}
	}
	if len(queues) != 11 || queues["q_1d"] != 5301 || queues["q_2h"] != 4392 {
		t.Errorf("queues %v", queues)
	}
	if j := w.Jobs[1]; j.Queue != "q_2w" || j.NodeSpec != "1:ppn=12" || j.Submit != 548 || j.ReqMem != 91268055040 {
		t.Errorf("job 1: %+v", j)
	}
}

func TestOpenPBSLog(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join(traceDir, "OpenPBS.log"))
	if err != nil {
		t.Skipf("log not available: %v", err)
	}
	defer f.Close()
	w, err := ReadAccounting(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) != 200 || w.UnixStartTime != 1734800289 {
		t.Fatalf("%d jobs, start %d", len(w.Jobs), w.UnixStartTime)
	}
	j := w.Jobs[0]
	if j.PBSID != "112461.torque1.grid.cesnet.cz" || j.User != "vchlum" || j.Group != "meta" || j.Queue != "workq" ||
		j.Submit != 0 || j.Wait != 0 || j.Run != 1806 || j.ReqProcs != 2 || j.Procs != 2 || j.ReqTime != 7200 ||
		j.ReqMem != 600<<20 || j.Status != 1 || j.Select != "2:ncpus=1:mem=300mb" {
		t.Errorf("first job %+v", j)
	}
	if err := Normalize(w, 6); err != nil || len(w.Jobs) != 200 {
		t.Fatalf("normalized: %v, %d jobs", err, len(w.Jobs))
	}
	checkNormalized(t, w)
}

// checkNormalized checks what Normalize promises of every job.
func checkNormalized(t testing.TB, w *Workload) {
	t.Helper()
	for i, j := range w.Jobs {
		if j.Run < 0 || j.Procs < 1 || j.Procs > w.MaxProcs || j.ReqTime < j.Run || j.Submit < 0 {
			t.Fatalf("job %d: %+v", j.ID, j)
		}
		if j.MinProcs != 0 && (j.MinProcs < 1 || j.MaxProcs < j.MinProcs || j.MaxProcs > w.MaxProcs) {
			t.Fatalf("job %d: elastic range %d-%d on %d processors", j.ID, j.MinProcs, j.MaxProcs, w.MaxProcs)
		}
		if i > 0 && w.Jobs[i-1].Submit > j.Submit {
			t.Fatalf("job %d submitted before job %d", j.ID, w.Jobs[i-1].ID)
		}
	}
}

// BenchmarkReadHPC2N reads the largest trace: time, and bytes held after.
func BenchmarkReadHPC2N(b *testing.B) {
	path := filepath.Join(traceDir, "HPC2N-2002-2.1-cln.swf.gz")
	if _, err := os.Stat(path); err != nil {
		b.Skipf("trace not available: %v", err)
	}
	b.ReportAllocs()
	var live uint64
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		w, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		live = m1.HeapAlloc - m0.HeapAlloc
		runtime.KeepAlive(w)
	}
	b.ReportMetric(float64(live)/(1<<20), "MB-held")
}
