package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopbs/internal/trace"
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
	if code := run([]string{"--sched-priv", "../examples/sim/easy", "--json", "--csv", csvPath, trace}, &out, &errb); code != 0 {
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
	if code := run([]string{"--sched-priv", "../examples/sim/easy", "--svg", plots, trace}, &out, &errb); code != 0 {
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
		if code := run([]string{"--sched-priv", "../examples/sim/easy", "--json", path}, &outs[k], &errb); code != 0 {
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
	examples, err := filepath.Glob("../examples/sim/*/sched_config")
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
