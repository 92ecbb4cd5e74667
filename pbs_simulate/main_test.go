package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A four-job SWF trace on a machine of 4 processors: the command prints
// the metrics as JSON and one CSV row per job, and refuses bad usage.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.swf")
	swf := "; MaxProcs: 4\n" +
		"1 0 -1 60 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n" +
		"2 0 -1 50 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1\n" +
		"3 0 -1 30 2 -1 -1 2 40 -1 1 2 1 -1 1 -1 -1 -1\n" +
		"4 10 -1 200 2 -1 -1 2 300 -1 1 2 1 -1 1 -1 -1 -1\n"
	if err := os.WriteFile(trace, []byte(swf), 0o644); err != nil {
		t.Fatal(err)
	}
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
	rows, _ := os.ReadFile(csvPath)
	if lines := strings.Split(strings.TrimSpace(string(rows)), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[2], "2,0,60,110,60,") {
		t.Fatalf("csv:\n%s", rows)
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
	for _, bad := range [][]string{{}, {"--procs", "4", "--nodes", trace, trace}, {"--frobnicate", trace}} {
		if code := run(bad, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}
