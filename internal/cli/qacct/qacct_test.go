package qacct

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
)

// eRec is an E record of a job of owner in queue on host, ended at end,
// 2 cpus for wall seconds with cput seconds of cpu, mem kb of 1gb.
func eRec(id, owner, queue, host string, end time.Time, wall, cput, memKB int, exit int) string {
	kvs := []accounting.KV{{Key: "user", Value: owner}, {Key: "group", Value: "g"}, {Key: "project", Value: "p"},
		{Key: "jobname", Value: "j"}, {Key: "queue", Value: queue}, {Key: "start", Value: fmt.Sprint(end.Unix() - int64(wall))},
		{Key: "exec_host", Value: host + "/0*2"}, {Key: "Resource_List.mem", Value: "1gb"}, {Key: "Resource_List.ncpus", Value: "2"},
		{Key: "Resource_List.walltime", Value: "01:00:00"}, {Key: "Exit_status", Value: fmt.Sprint(exit)},
		{Key: "resources_used.cput", Value: fmt.Sprintf("00:%02d:%02d", cput/60, cput%60)}, {Key: "resources_used.mem", Value: fmt.Sprintf("%dkb", memKB)},
		{Key: "resources_used.walltime", Value: fmt.Sprintf("00:%02d:%02d", wall/60, wall%60)}}
	return accounting.Format(end, accounting.Ended, id, kvs)
}

// logDir writes two days of logs in loc: the 1st plain (a damaged line in
// it), the 2nd compressed.
func logDir(t *testing.T, loc *time.Location) string {
	t.Helper()
	dir := t.TempDir()
	d1 := time.Date(2026, 11, 1, 10, 0, 0, 0, loc)
	d2 := time.Date(2026, 11, 2, 10, 0, 0, 0, loc)
	day1 := accounting.Format(d1.Add(-time.Hour), accounting.Queued, "1.s", []accounting.KV{{Key: "queue", Value: "workq"}}) +
		eRec("1.s", "alice", "workq", "n1", d1, 600, 600, 1024, 0) +
		"this is no record\n" +
		eRec("2.s", "bob", "long", "n2", d1.Add(8*time.Hour), 1200, 2400, 2048, 1) +
		accounting.Format(d1.Add(8*time.Hour), accounting.NodeUsage, "2.s", []accounting.KV{{Key: "node", Value: "n2"}, {Key: "ncpus", Value: "1"}, {Key: "resources_used.cput", Value: "00:20:00"}}) +
		accounting.Format(d1.Add(8*time.Hour), accounting.NodeUsage, "2.s", []accounting.KV{{Key: "node", Value: "n3"}, {Key: "ncpus", Value: "1"}, {Key: "resources_used.cput", Value: "00:10:00"}, {Key: "resources_used.mem", Value: "5kb"}}) +
		accounting.Format(d1, accounting.Deleted, "3.s", []accounting.KV{{Key: "requestor", Value: "bob@h"}})
	day2 := eRec("4[1].s", "alice", "workq", "n1", d2, 60, 30, 512, 0) + eRec("4[2].s", "alice", "workq", "n2", d2, 60, 30, 512, 0)
	os.WriteFile(filepath.Join(dir, "20261101"), []byte(day1), 0o644)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(day2))
	zw.Close()
	os.WriteFile(filepath.Join(dir, "20261102.gz"), z.Bytes(), 0o644)
	return dir
}

func qacct(t *testing.T, now time.Time, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb, now)
	return code, out.String(), errb.String()
}

// Summaries by owner, queue and host over plain and compressed days, in
// windows that cut a day and that cover days whole (from the cache the
// first run made), with a damaged line skipped, counted and named.
func TestReport(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("test", 3600)
	dir := logDir(t, loc)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, loc)
	code, out, errs := qacct(t, now, "-f", dir, "-o", "--csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "owner,jobs,failed,wall_seconds,cpu_seconds,cpu_held_seconds,mem_peak_bytes,cpu_efficiency,mem_efficiency,wall_use\n" +
		"alice,3,0,720,660,1440,1048576,0.4583,0.0007,0.0667\n" +
		"bob,1,1,1200,2400,2400,2097152,1.0000,0.0020,0.3333\n"
	if out != want {
		t.Errorf("-o --csv:\n%s\nwant\n%s", out, want)
	}
	if !strings.Contains(errs, "skipped 1 damaged line(s), left out of every total; the first: 20261101 line 3: not an accounting record") {
		t.Errorf("the damaged line: %q", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".qacct", "20261102.gz.sum")); err != nil {
		t.Errorf("no cache of the compressed day: %v", err)
	}
	// Again from the cache, with a filter on one host: the same sums.
	_, out, _ = qacct(t, now, "-f", dir, "-o", "alice", "-h", "n1", "--csv")
	if !strings.Contains(out, "alice,n1,2,0,660,630,1320,") {
		t.Errorf("-o alice -h n1:\n%s", out)
	}
	// A window that cuts the 1st at 12:00 and the 2nd whole.
	_, out, _ = qacct(t, now, "-f", dir, "-b", "11011200", "-o", "--csv")
	if !strings.Contains(out, "alice,2,0,120,") || !strings.Contains(out, "bob,1,1,1200,") {
		t.Errorf("-b 11011200:\n%s", out)
	}
	_, out, _ = qacct(t, now, "-f", dir, "-e", "202611020000", "-q", "--csv")
	if !strings.Contains(out, "long,1,") || !strings.Contains(out, "workq,1,0,600,") {
		t.Errorf("-e 202611020000 -q:\n%s", out)
	}
	// A log that changed is read again, not answered from its cache.
	f, _ := os.OpenFile(filepath.Join(dir, "20261101"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(eRec("5.s", "carol", "workq", "n3", time.Date(2026, 11, 1, 20, 0, 0, 0, loc), 10, 10, 1, 0))
	f.Close()
	_, out, _ = qacct(t, now, "-f", dir, "-o", "carol", "--csv")
	if !strings.Contains(out, "carol,1,0,10,") {
		t.Errorf("after an appended record:\n%s", out)
	}
	// The table and --json.
	_, out, _ = qacct(t, now, "-f", dir)
	if !strings.Contains(out, "TOTAL") || !strings.Contains(out, "all     5") {
		t.Errorf("the total:\n%s", out)
	}
	_, out, _ = qacct(t, now, "-f", dir, "-q", "long", "--json")
	var js struct {
		Rows []struct {
			Group map[string]string
			Jobs  int64
			CPU   *float64 `json:"cpu_efficiency"`
		}
		Damaged int64 `json:"damaged_lines"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil || len(js.Rows) != 1 || js.Rows[0].Group["queue"] != "long" || js.Rows[0].Jobs != 1 || *js.Rows[0].CPU != 1 || js.Damaged != 1 {
		t.Errorf("--json: %v\n%s", err, out)
	}
}

// -j: a job's every record and its efficiency; an array's subjobs.
func TestJob(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("test", 0)
	dir := logDir(t, loc)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, loc)
	code, out, errs := qacct(t, now, "-f", dir, "-j", "1")
	if code != 0 || !strings.Contains(out, "record Q") || !strings.Contains(out, "record E") || !strings.Contains(out, "cpu_efficiency  50.0%") ||
		!strings.Contains(out, "walltime        00:10:00 of 01:00:00 requested") {
		t.Errorf("-j 1: %d %s\n%s", code, errs, out)
	}
	// Each day's job-number range is indexed apart for -j.
	if _, err := os.Stat(filepath.Join(dir, ".qacct", "20261101.seq")); err != nil {
		t.Errorf("no job-number index: %v", err)
	}
	// A job of two nodes: each one's part and efficiency.
	_, out, _ = qacct(t, now, "-f", dir, "-j", "2")
	if !strings.Contains(out, "node            n2: ncpus 1, cpu_time 00:20:00, mem_peak -, cpu_efficiency 100.0%") ||
		!strings.Contains(out, "node            n3: ncpus 1, cpu_time 00:10:00, mem_peak 5kb, cpu_efficiency 50.0%") {
		t.Errorf("-j 2, by node:\n%s", out)
	}
	_, out, _ = qacct(t, now, "-f", dir, "-j", "2", "--json")
	if !strings.Contains(out, `"node": "n3"`) || !strings.Contains(out, `"cpu_efficiency": 0.5`) {
		t.Errorf("-j 2 --json, by node:\n%s", out)
	}
	_, out, _ = qacct(t, now, "-f", dir, "-j", "4[]")
	if strings.Count(out, "jobid") != 2 || !strings.Contains(out, "4[1].s") || !strings.Contains(out, "4[2].s") {
		t.Errorf("-j 4[]:\n%s", out)
	}
	_, out, _ = qacct(t, now, "-f", dir, "-j", "4[2].s", "--json")
	if !strings.Contains(out, `"id": "4[2].s"`) || strings.Contains(out, "4[1]") || !strings.Contains(out, `"cpu_efficiency": 0.25`) {
		t.Errorf("-j 4[2].s --json:\n%s", out)
	}
	if code, _, errs := qacct(t, now, "-f", dir, "-j", "99"); code != 1 || !strings.Contains(errs, "job 99 not found") {
		t.Errorf("-j 99: %d %s", code, errs)
	}
}

// Bad input: a message naming it, exit 2.
func TestRefusals(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-x"}, "unknown option -x"},
		{[]string{"-b", "yesterday"}, `-b "yesterday": want [[CC]YY]MMDDhhmm[.SS]`},
		{[]string{"-d", "0"}, `-d "0": want a number of days above 0`},
		{[]string{"-d"}, "option -d needs a value"},
		{[]string{"-d", "2", "-b", "11010000"}, "give -b or -d, not both"},
		{[]string{"-b", "11020000", "-e", "11010000"}, "is not before -e"},
		{[]string{"-j", "1", "-o"}, "-j shows one job"},
		{[]string{"--json", "--csv"}, "give one of --json and --csv"},
		{[]string{"-j", "abc", "-f", "/"}, `-j "abc": want a job id`},
		{[]string{"stray"}, `unexpected argument "stray"`},
	} {
		code, _, errs := qacct(t, now, tc.args...)
		if code != 2 || !strings.HasPrefix(errs, "qacct: ") || !strings.Contains(errs, tc.want) {
			t.Errorf("qacct %v: %d %q, want %q", tc.args, code, errs, tc.want)
		}
	}
	if code, out, _ := qacct(t, now, "--help"); code != 0 || !strings.HasPrefix(out, "usage: qacct") {
		t.Errorf("--help: %d %q", code, out)
	}
}
