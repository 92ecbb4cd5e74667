package simulate

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/trace"
)

// A four-job SWF trace on a machine of 4 processors: the command prints
// the metrics as JSON and one CSV row per job, and refuses bad usage.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	swf := "; MaxProcs: 4\n" +
		"1 0 -1 60 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n" +
		"2 0 -1 50 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1\n" +
		"3 0 -1 30 2 -1 -1 2 40 -1 1 2 1 -1 1 -1 -1 -1\n" +
		"4 10 -1 200 2 -1 -1 2 300 -1 1 2 1 -1 1 -1 -1 -1\n"
	trace := writeTrace(t, swf)
	csvPath := filepath.Join(dir, "jobs.csv")
	var out, errb bytes.Buffer
	if code := run([]string{"--sched-priv", "../../../examples/sim/easy", "--json", "--csv", csvPath, trace}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m struct {
		Jobs        int     `json:"jobs"`
		AvgWait     float64 `json:"avg_wait_s"`
		AvgBSLD     float64 `json:"avg_bsld"`
		Utilization float64 `json:"utilization"`
		Makespan    int64   `json:"makespan_s"`
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// EASY: 1 and 3 start at 0, 2 at 60 (1 ended early), 4 at 110.
	if m.Jobs != 4 || m.AvgWait != (0+60+0+100)/4.0 || m.Makespan != 310 {
		t.Fatalf("metrics %+v", m)
	}
	// A row per job, in the order the jobs end.
	rows, _ := os.ReadFile(csvPath)
	if want := "job,submit,start,end,wait,run,procs,walltime,user,queue\n" +
		"3,0,0,30,0,30,2,40,2,1\n1,0,0,60,0,60,2,100,1,1\n2,0,60,110,60,50,4,100,1,1\n4,10,110,310,100,200,2,300,2,1\n"; string(rows) != want {
		t.Fatalf("csv:\n%s\nwant\n%s", rows, want)
	}
	// Plots a browser opens: well-formed SVG, and an index page.
	plots := filepath.Join(dir, "plots")
	if code := run([]string{"--sched-priv", "../../../examples/sim/easy", "--svg", plots, trace}, &out, &errb); code != 0 {
		t.Fatalf("--svg: exit %d: %s", code, errb.String())
	}
	for _, name := range []string{"utilization.svg", "queue.svg", "waits.svg", "users.svg"} {
		b, err := os.ReadFile(filepath.Join(plots, name))
		if err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(bytes.NewReader(b))
		for {
			if _, err := dec.Token(); err != nil {
				if err != io.EOF {
					t.Fatalf("%s is not well-formed: %v", name, err)
				}
				break
			}
		}
		if !bytes.Contains(b, []byte("<polyline")) && !bytes.Contains(b, []byte("<rect fill=")) {
			t.Fatalf("%s draws nothing:\n%s", name, b)
		}
	}
	if _, err := os.Stat(filepath.Join(plots, "index.html")); err != nil {
		t.Fatal(err)
	}
	// A line the stream cannot parse, after jobs replayed: an error naming
	// the file and the line.
	broken := filepath.Join(dir, "broken.swf")
	os.WriteFile(broken, []byte(swf+"1 2 3\n"), 0o644)
	errb.Reset()
	if code := run([]string{broken}, &out, &errb); code != 1 || !strings.Contains(errb.String(), broken+": line 6: 3 fields") {
		t.Errorf("broken trace: exit %d: %s", code, errb.String())
	}
	for _, bad := range [][]string{{}, {"--procs", "4", "--nodes", trace, trace}, {"--frobnicate", trace}, {"--compare", trace}} {
		if code := run(bad, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// A trace out of submit order by more than the stream's window is
// replayed again from memory, with the figures of the same trace sorted.
func TestUnsortedTrace(t *testing.T) {
	dir := t.TempDir()
	var sorted, unsorted strings.Builder
	sorted.WriteString("; MaxProcs: 16\n")
	unsorted.WriteString("; MaxProcs: 16\n")
	line := func(b *strings.Builder, id, submit int) {
		fmt.Fprintf(b, "%d %d -1 %d 1 -1 -1 %d 30 -1 1 %d 1 -1 1 -1 -1 -1\n", id, submit, 5+id%20, 1+id%4, id%7)
	}
	n := trace.ReorderWindow + 10
	line(&sorted, n, 0) // the last line of the unsorted file
	for i := 1; i < n; i++ {
		line(&sorted, i, i*3)
		line(&unsorted, i, i*3)
	}
	line(&unsorted, n, 0)
	var outs [2]bytes.Buffer
	for k, b := range []*strings.Builder{&sorted, &unsorted} {
		path := filepath.Join(dir, fmt.Sprintf("t%d.swf", k))
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		if code := run([]string{"--sched-priv", "../../../examples/sim/easy", "--json", path}, &outs[k], &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if note := "trace cannot be replayed in one pass"; k == 1 != strings.Contains(errb.String(), note) {
			t.Errorf("file %d: stderr %q", k, errb.String())
		}
	}
	if outs[0].String() != outs[1].String() || !strings.Contains(outs[0].String(), fmt.Sprintf(`"jobs": %d,`, n)) {
		t.Errorf("sorted:\n%s\nunsorted:\n%s", outs[0].String(), outs[1].String())
	}
}

// Every settings directory of examples/sim replays a trace: a broken
// example fails here rather than in a reader's hands.
func TestExampleSettings(t *testing.T) {
	trace := writeTrace(t, "; MaxProcs: 4\n"+
		"1 0 -1 60 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1\n"+
		"2 0 -1 50 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n"+
		"3 5 -1 30 2 -1 -1 2 40 -1 1 2 1 -1 1 -1 -1 -1\n")
	examples, err := filepath.Glob("../../../examples/sim/*/sched_config")
	if err != nil || len(examples) < 4 {
		t.Fatalf("examples: %v, %v", examples, err)
	}
	for _, cfg := range examples {
		var out, errb bytes.Buffer
		if code := run([]string{"--sched-priv", filepath.Dir(cfg), "--json", trace}, &out, &errb); code != 0 {
			t.Errorf("%s: exit %d: %s", filepath.Dir(cfg), code, errb.String())
		}
	}
}

// writeTrace writes an SWF trace to a temporary file and returns its path.
func writeTrace(t *testing.T, swf string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.swf")
	if err := os.WriteFile(path, []byte(swf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The start of every job of trace prefixes, as a digest of --csv: with
// nodes, queues, node specs and exclusive jobs (wagap's machines file),
// and with fair share, through every example and the shipped files. The
// digests were taken before the simulator's passes were made cheaper on
// deep queues (issue 20 item 10), which must not change a decision.
func TestReplayStartsUnchanged(t *testing.T) {
	const traces = "../../../../shared/traces"
	// part writes jobs lines of a trace after skipping skip, with its
	// header and machines file.
	part := func(name string, skip, jobs int) string {
		src, err := os.ReadFile(filepath.Join(traces, name))
		if err != nil {
			t.Skipf("trace not available: %v", err)
		}
		if strings.HasSuffix(name, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(src))
			if err != nil {
				t.Fatal(err)
			}
			if src, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
			name = strings.TrimSuffix(name, ".gz")
		}
		var b strings.Builder
		n := 0
		for line := range strings.Lines(string(src)) {
			if !strings.HasPrefix(line, ";") {
				if n++; n <= skip {
					continue
				}
				if n > skip+jobs {
					break
				}
			}
			b.WriteString(line)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if m, err := os.ReadFile(filepath.Join(traces, name+".machines")); err == nil {
			if err := os.WriteFile(path+".machines", m, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	wagap := part("wagap-2013.swf", 8000, 2000)
	kth := part("KTH-SP2-1996-2.1-cln.swf.gz", 0, 6000)
	hpc2n := part("HPC2N-2002-2.1-cln.swf.gz", 60000, 10000)
	for _, tc := range []struct {
		trace, settings, want string
	}{
		{wagap, "", "82c428980ee155b12eaa1b951b32722e12d95a5377c7eb079efdb38b217fe593"},
		{wagap, "fcfs", "65caf7d507cf5ec36157b95c082d49c5c4ddccf4d2ce624f0e6d654e85b5833f"},
		{wagap, "easy", "3b4158d6a7b27b2f3d9e22415c903f25a5dbffde7bdf8c1fab7a1f7c313e000d"},
		{wagap, "fairshare", "6dff267440004eb985497e877f27619d0192d3a101cad67002bbfd3df7dcba27"},
		{wagap, "fairshare-strict", "96ad1639c02b277ebd67b049d0da8f33703a32bbb2f28e8c1c2f67ff534eea79"},
		{kth, "", "16b1773345bac271fc82a79a14373ffe1b51c34425ac49fec57751aa8d1da269"},
		{kth, "fairshare", "f53358b35b4648085e6989c3e58e315c6e8e169d99fa6e832e68289c96719d56"},
		{hpc2n, "", "f6f4e4438f4e114790eab6ff4dafe312d1b497ffc82e745540c01bd5b8683e96"},
		{hpc2n, "fcfs", "4de1e9b637ba09625ab4a33cff197cc8f6a9e43af9ac96e07100afdc3a6a3b2c"},
		{hpc2n, "easy", "f6f4e4438f4e114790eab6ff4dafe312d1b497ffc82e745540c01bd5b8683e96"},
	} {
		name := filepath.Base(tc.trace) + "/" + tc.settings
		t.Run(name, func(t *testing.T) {
			csvPath := filepath.Join(t.TempDir(), "jobs.csv")
			args := []string{"--csv", csvPath, tc.trace}
			if tc.settings != "" {
				args = append([]string{"--sched-priv", "../../../examples/sim/" + tc.settings}, args...)
			}
			var out, errb bytes.Buffer
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			rows, err := os.ReadFile(csvPath)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(rows)); got != tc.want {
				t.Errorf("--csv digest %s, want %s (%d rows)", got, tc.want, bytes.Count(rows, []byte("\n")))
			}
		})
	}
}

// --elastic makes a fraction of the jobs elastic, the same ones for one
// seed, with minimum half and maximum twice their processors (capped by
// the machine), and lays the machine out in the header's nodes.
func TestElasticOption(t *testing.T) {
	var swf strings.Builder
	swf.WriteString("; MaxNodes: 8\n; MaxProcs: 8\n")
	for i := 1; i <= 200; i++ {
		procs := 1 + i%8
		fmt.Fprintf(&swf, "%d %d -1 100 %d -1 -1 %d 200 -1 1 1 1 -1 -1 -1 -1 -1\n", i, i*10, procs, procs)
	}
	path := writeTrace(t, swf.String())
	elastic := func(fraction float64, seed uint64) map[string][2]int {
		s, err := trace.OpenStream(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Normalize(0); err != nil {
			t.Fatal(err)
		}
		js := newJobSource(s, path, nil)
		js.makeElastic(fraction, seed, 8)
		out := map[string][2]int{}
		for {
			j, err := js.Next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			if j.MinProcs > 0 {
				if want := [2]int{(j.Procs + 1) / 2, min(2*j.Procs, 8)}; [2]int{j.MinProcs, j.MaxProcs} != want {
					t.Fatalf("job %s of %d processors: range %d-%d, want %v", j.ID, j.Procs, j.MinProcs, j.MaxProcs, want)
				}
				out[j.ID] = [2]int{j.MinProcs, j.MaxProcs}
			}
		}
	}
	half, again, other := elastic(0.5, 1), elastic(0.5, 1), elastic(0.5, 2)
	if len(half) < 70 || len(half) > 130 {
		t.Errorf("%d of 200 jobs made elastic with --elastic 0.5", len(half))
	}
	if fmt.Sprint(half) != fmt.Sprint(again) || fmt.Sprint(half) == fmt.Sprint(other) {
		t.Errorf("the draw does not follow the seed")
	}
	if n := len(elastic(0, 1)); n != 0 {
		t.Errorf("%d jobs elastic with --elastic 0", n)
	}
	if n := len(elastic(1, 1)); n != 200 {
		t.Errorf("%d jobs elastic with --elastic 1", n)
	}
	// The whole command: the machine in nodes, both modes side by side.
	var out, errb bytes.Buffer
	if code := run([]string{"--elastic", "0.5", "--seed", "3", "--compare", "../../../examples/sim/queued", "../../../examples/sim/balanced", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "200 jobs (0 dropped) on 8 processors in 8 nodes") {
		t.Errorf("output:\n%s", out.String())
	}
	for _, bad := range [][]string{{"--elastic", "1.5", path}, {"--elastic", "-0.1", path}, {"--elastic", "NaN", path}, {"--elastic", "half", path}} {
		if code := run(bad, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// testdata/elastic.swf replays as TestElasticHandWorked (sched/sim)
// works it out, through the command: its own elastic jobs (--elastic 0
// lays the machine out in its 4 nodes), queued and balanced mode with an
// immediate shrink side by side (--compare), in the CSV rows.
func TestElasticTrace(t *testing.T) {
	dir := t.TempDir()
	balanced := filepath.Join(dir, "balanced")
	os.MkdirAll(balanced, 0o755)
	cfg, err := os.ReadFile("../../../examples/sim/balanced/sched_config")
	if err != nil {
		t.Fatal(err)
	}
	cfg = bytes.Replace(cfg, []byte("shrink: graceful all"), []byte("shrink: immediate all"), 1)
	if err := os.WriteFile(filepath.Join(balanced, "sched_config"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{"../../../examples/sim/queued", "1,0,0,30\n2,0,0,65\n3,20,65,75\n4,40,65,85\n5,40,75,90\n"},
		{balanced, "1,0,0,30\n3,20,20,30\n4,40,40,60\n5,40,60,80\n2,0,0,93\n"},
	} {
		csvPath := filepath.Join(dir, "jobs.csv")
		var out, errb bytes.Buffer
		if code := run([]string{"--elastic", "0", "--sched-priv", tc.dir, "--csv", csvPath, "../../../sched/sim/testdata/elastic.swf"}, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		rows, _ := os.ReadFile(csvPath)
		var got strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(string(rows)), "\n")[1:] {
			f := strings.Split(line, ",")
			got.WriteString(strings.Join(f[:4], ",") + "\n")
		}
		if got.String() != tc.want {
			t.Errorf("%s: job,submit,start,end:\n%s\nwant\n%s", tc.dir, got.String(), tc.want)
		}
		if !strings.Contains(out.String(), "on 4 processors in 4 nodes") {
			t.Errorf("%s: output:\n%s", tc.dir, out.String())
		}
	}
}

// --express puts a fraction of the jobs in queue express (the same ones
// for one seed), an express queue by the replay's preempt_queue_prio: on
// a full machine its jobs wait less with preemption, which suspends
// others (the report counts them), than without.
func TestExpressOption(t *testing.T) {
	var swf strings.Builder
	swf.WriteString("; MaxProcs: 4\n")
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&swf, "%d %d -1 500 4 -1 -1 4 600 -1 1 1 1 -1 1 -1 -1 -1\n", i, i*10)
	}
	path := writeTrace(t, swf.String())
	var out, errb bytes.Buffer
	if code := run([]string{"--express", "0.2", "--seed", "7", "--compare", "../../../examples/sim/express", "../../../examples/sim/preempt", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var preempted []string
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "jobs" && f[1] == "preempted" {
			preempted = f[2:]
		}
	}
	if len(preempted) != 2 || preempted[0] != "0" || preempted[1] == "0" {
		t.Fatalf("jobs preempted %q, want none without preemption and some with it:\n%s", preempted, out.String())
	}
	waits := map[string]string{}
	for _, dir := range []string{"express", "preempt"} {
		_, after, _ := strings.Cut(out.String(), "../../../examples/sim/"+dir+": queues")
		for _, line := range strings.Split(after, "\n") {
			if f := strings.Fields(line); len(f) == 4 && f[0] == "express" {
				waits[dir] = f[2]
				break
			}
		}
	}
	with, _ := strconv.Atoi(waits["preempt"])
	without, _ := strconv.Atoi(waits["express"])
	if waits["preempt"] == "" || with >= without {
		t.Errorf("express queue's average wait %v, want less with preemption (express jobs still wait for each other: equal rank):\n%s", waits, out.String())
	}
	if code := run([]string{"--express", "2", path}, &out, &errb); code != 2 {
		t.Errorf("--express 2: exit %d, want 2", code)
	}
}
