package sched

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/logging"
	"github.com/gopbs/gopbs/sched/fifo"
)

// syncBuffer is a log output the test reads while the runner writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns what was logged since the last call.
func (b *syncBuffer) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

// testRunner is a runner on dir as Run builds it, logging at trace level.
func testRunner(dir string) (*runner, *syncBuffer) {
	out := &syncBuffer{}
	flog := logging.NewFiltered(hclog.New(&hclog.LoggerOptions{Name: "pbs_sched", Level: hclog.Trace, Output: out}))
	return &runner{policy: &fifo.Policy{}, o: Options{Name: "pbs_sched"}, log: flog, logFilter: flog, dir: dir}, out
}

func writeConfig(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "sched_config"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// log_filter applies as soon as a sched_config with it loads, to the
// runner's and the policy's loggers; a refused file leaves it as it was.
func TestConfigureAppliesLogFilter(t *testing.T) {
	t.Parallel()
	dir := privDir(t, time.Now().Year(), nil)
	r, out := testRunner(dir)
	policyLog := r.log.Named("policy")
	emit := func() string {
		r.log.Trace("a debug2 line")
		r.log.Info("a job line", "job", "1.srv")
		policyLog.Debug("a policy job line", "job", "2.srv")
		r.log.Info("a cycle line")
		return out.take()
	}
	if err := r.configure(); err != nil { // the shipped log_filter: 256
		t.Fatal(err)
	}
	if got := out.take(); !strings.Contains(got, "configuration loaded") || !strings.Contains(got, "log_filter=debug2") {
		t.Errorf("load not logged with its filter:\n%s", got)
	}
	got := emit()
	if strings.Contains(got, "a debug2 line") || !strings.Contains(got, "a job line") || !strings.Contains(got, "a cycle line") {
		t.Errorf("log_filter 256:\n%s", got)
	}

	writeConfig(t, dir, "log_filter: 8\n")
	if err := r.configure(); err != nil {
		t.Fatal(err)
	}
	out.take()
	got = emit()
	if strings.Contains(got, "job line") || !strings.Contains(got, "a debug2 line") || !strings.Contains(got, "a cycle line") {
		t.Errorf("log_filter 8:\n%s", got)
	}

	writeConfig(t, dir, "log_filter: 0\nlog_filter: lots\n")
	if err := r.configure(); err == nil {
		t.Fatal("a broken sched_config loaded")
	}
	if r.logFilter.Mask() != 8 {
		t.Errorf("a refused file changed log_filter to %d", r.logFilter.Mask())
	}

	// Without the line, the admin guide's default (256) applies.
	writeConfig(t, dir, "by_queue: true\n")
	if err := r.configure(); err != nil {
		t.Fatal(err)
	}
	if got := out.take(); !strings.Contains(got, "log_filter=debug2") {
		t.Errorf("no log_filter: %s", got)
	}
	if got := emit(); strings.Contains(got, "a debug2 line") || strings.Count(got, "\n") != 3 {
		t.Errorf("no log_filter should drop debug2 only:\n%s", got)
	}

	writeConfig(t, dir, "log_filter: 0\n")
	if err := r.configure(); err != nil {
		t.Fatal(err)
	}
	if got := out.take(); !strings.Contains(got, "log_filter=none") {
		t.Errorf("log_filter 0: %s", got)
	}
	if got := emit(); strings.Count(got, "\n") != 4 {
		t.Errorf("log_filter 0 should drop nothing:\n%s", got)
	}
}

// Warnings reach sched_logs with file and line: an obsolete option, a
// missing file, a holidays file for another year (once, not every cycle).
func TestConfigureLogsWarnings(t *testing.T) {
	t.Parallel()
	year := time.Now().Year()
	dir := privDir(t, year-1, map[string]string{"sched_config": "by_queue: true\ndebug_level: 3\n", "dedicated_time": ""})
	r, out := testRunner(dir)
	if err := r.configure(); err != nil {
		t.Fatal(err)
	}
	got := out.take()
	for _, want := range []string{
		"[WARN]  pbs_sched: sched_priv: warning=\"" + filepath.Join(dir, "sched_config") + ":2: debug_level is an option of the old scheduler that means nothing now",
		filepath.Join(dir, "dedicated_time") + ": file not found; using the shipped default",
		filepath.Join(dir, "holidays") + ":28: holidays are for " + strconv.Itoa(year-1) + " but the year is " + strconv.Itoa(year),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "class=admin"); n < 4 {
		t.Errorf("warnings and the load should be admin lines:\n%s", got)
	}
	r.noteYear(time.Now())
	if got := out.take(); got != "" {
		t.Errorf("the stale year is logged again each cycle:\n%s", got)
	}
	if c := r.status.comment("pbs_sched"); !strings.HasPrefix(c, "pbs_sched: "+filepath.Join(dir, "holidays")+":28: holidays are for") {
		t.Errorf("server comment %q", c)
	}
	// A year later than the file, then the right year again.
	data, _ := os.ReadFile(filepath.Join(dir, "holidays"))
	os.WriteFile(filepath.Join(dir, "holidays"), bytes.Replace(data, []byte("YEAR\t"+strconv.Itoa(year-1)), []byte("YEAR\t"+strconv.Itoa(year)), 1), 0o644)
	if err := r.configure(); err != nil {
		t.Fatal(err)
	}
	if got := out.take(); !strings.Contains(got, "the holidays file is for this year") {
		t.Errorf("the fixed year is not logged:\n%s", got)
	}
	if c := r.status.comment("pbs_sched"); c != "" {
		t.Errorf("server comment %q with a current holidays file", c)
	}
}

// A refused edit is the server comment, naming file and line, until a good
// file loads; the policy in force stays the previous one.
func TestConfigureRefusedStatus(t *testing.T) {
	t.Parallel()
	dir := privDir(t, time.Now().Year(), nil)
	r, _ := testRunner(dir)
	if err := r.configure(); err != nil {
		t.Fatal(err)
	}
	if c := r.status.comment("pbs_sched"); c != "" {
		t.Fatalf("comment %q after a good load", c)
	}
	writeConfig(t, dir, "by_queue: true\nsort_by: smallest_mem_first\nround_robin: perhaps\n")
	if err := r.configure(); err == nil {
		t.Fatal("a broken file loaded")
	}
	want := "pbs_sched: sched_priv refused, the previous policy stays in force: " + filepath.Join(dir, "sched_config") +
		`:2: sort_by: unknown sort "smallest_mem_first"; did you mean smallest_memory_first? (and 1 more in sched_logs)`
	if c := r.status.comment("pbs_sched"); c != want {
		t.Errorf("comment\n %q\nwant\n %q", c, want)
	}
	os.Remove(filepath.Join(dir, "sched_config"))
	r.configure()
	if c := r.status.comment("pbs_sched"); !strings.Contains(c, "sched_config: open sched_config: no such file or directory") {
		t.Errorf("comment for a missing sched_config: %q", c)
	}
	writeConfig(t, dir, "by_queue: true\n")
	if err := r.configure(); err != nil {
		t.Fatal(err)
	}
	if c := r.status.comment("pbs_sched"); c != "" {
		t.Errorf("comment %q after the fix", c)
	}
}
