package sched

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fifo"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
)

// privDir makes a sched_priv with the shipped files for year, then writes
// the given files over them ("" removes one).
func privDir(t *testing.T, year int, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sched_priv")
	for name, text := range files {
		if text == "" {
			continue
		}
		os.MkdirAll(dir, 0o750)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := privdir.InstallDefaults(dir, year); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if text == "" {
			os.Remove(filepath.Join(dir, name))
		}
	}
	return dir
}

// pbs_sched -t: exit status and messages, each problem as file:line.
func TestCheck(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 6, 3, 12, 0, 0, 0, time.Local)
	fixtures := filepath.Join("..", "..", "shared", "fixtures", "sched_priv")
	tests := []struct {
		name   string
		dir    func(t *testing.T) string
		status int
		want   []string // lines of the output, DIR standing for the directory
	}{
		{"shipped files", func(t *testing.T) string { return privDir(t, 2030, nil) }, CheckOK,
			[]string{"DIR: OK"}},
		{"the guide's sample files as shipped", func(t *testing.T) string {
			if _, err := os.Stat(fixtures); err != nil {
				t.Skip("fixtures not available")
			}
			return fixtures
		}, CheckOK, []string{
			"DIR/holidays:81: warning: holidays are for 1999 but the year is 2030 (out of date): no day is a holiday until the file is updated",
			"DIR: OK, 1 warning"}},
		{"unknown option", func(t *testing.T) string {
			return privDir(t, 2030, map[string]string{"sched_config": "by_queue: true\n\nstrict_fifoo: true\n"})
		}, CheckRefused, []string{
			`DIR/sched_config:3: unknown option "strict_fifoo"; did you mean strict_fifo?`,
			"DIR: 1 error: the scheduler would keep its previous policy"}},
		{"errors in several files", func(t *testing.T) string {
			return privDir(t, 2030, map[string]string{
				"sched_config": "by_queue: maybe\nsort_by: smallest_mem_first non-prime\n",
				"holidays":     "YEAR 2030\nweekday 0400\n",
			})
		}, CheckRefused, []string{
			`DIR/sched_config:1: by_queue: "maybe" is not a boolean (true or false)`,
			`DIR/sched_config:2: sort_by: unknown sort "smallest_mem_first"; did you mean smallest_memory_first?`,
			"DIR/holidays:2: weekday: want two columns: prime start and non-prime start (HHMM, all or none)",
			"DIR: 3 errors: the scheduler would keep its previous policy"}},
		{"a job_sort_formula with a misspelt term", func(t *testing.T) string {
			return privDir(t, 2030, map[string]string{"sched_config": "fair_share: true\nhalf_life: 24:00:00\njob_sort_formula: \"eligible_time + 3600 * fairshare_factr\"\n"})
		}, CheckRefused, []string{
			`DIR/sched_config:3: job_sort_formula: column 24: unknown term "fairshare_factr"; did you mean fairshare_factor?`,
			"DIR: 1 error: the scheduler would keep its previous policy"}},
		{"a job_sort_formula with strict_fifo", func(t *testing.T) string {
			return privDir(t, 2030, map[string]string{"sched_config": "strict_fifo: true\njob_sort_formula: \"eligible_time + 3600 * fairshare_factor\"\nhalf_life: 24:00:00\n"})
		}, CheckOK, []string{"DIR: OK"}},
		{"obsolete option and a stale holidays file", func(t *testing.T) string {
			return privDir(t, 2029, map[string]string{"sched_config": "debug_level: 3\nby_queue: true\n"})
		}, CheckOK, []string{
			"DIR/sched_config:1: warning: debug_level is an option of the old scheduler that means nothing now (the old scheduler's debugging switch; log_filter chooses what sched_logs shows); ignored",
			"DIR/holidays:28: warning: holidays are for 2029 but the year is 2030 (out of date): no day is a holiday until the file is updated",
			"DIR: OK, 2 warnings"}},
		{"no holidays file", func(t *testing.T) string {
			return privDir(t, 2030, map[string]string{"holidays": ""})
		}, CheckOK, []string{
			"DIR/holidays: warning: file not found; all time is prime time (pbs_sched installs one for the current year when it starts)",
			"DIR: OK, 1 warning"}},
		{"a policy's own remarks", func(t *testing.T) string {
			return privDir(t, 2030, map[string]string{"sched_config": "round_robin: true\n"})
		}, CheckOK, []string{
			"DIR: warning: round_robin is not implemented by this policy: queues=2",
			"DIR: error: but this goes on",
			"DIR: OK, 2 warnings"}},
		{"a policy that refuses the files", func(t *testing.T) string {
			return privDir(t, 2030, map[string]string{"sched_config": "round_robin: true\nstrict_fifo: true\n"})
		}, CheckRefused, []string{
			"DIR: the policy refuses the files: strict_fifo and round_robin together"}},
		{"no sched_config", func(t *testing.T) string {
			return privDir(t, 2030, map[string]string{"sched_config": ""})
		}, CheckRefused, []string{
			"DIR/sched_config: open sched_config: no such file or directory",
			"DIR: cannot be used: the scheduler would keep its previous policy"}},
		{"no directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none") }, CheckRefused, []string{
			"DIR/sched_config: open sched_config: no such file or directory",
			"DIR: cannot be used: the scheduler would keep its previous policy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			var out bytes.Buffer
			status := Check(dir, remarkPolicy{&fifo.Policy{}}, now, &out)
			got := strings.Split(strings.TrimSuffix(strings.ReplaceAll(out.String(), dir, "DIR"), "\n"), "\n")
			if status != tt.status || strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("status %d, want %d; output:\n%s\nwant:\n%s", status, tt.status, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestCheckMainUsage(t *testing.T) {
	t.Parallel()
	if got := checkMain("pbs_sched", nil, []string{"a", "b"}, &fifo.Policy{}); got != CheckBadUsage {
		t.Errorf("two directories: status %d", got)
	}
	dir := privDir(t, time.Now().Year(), nil)
	if got := checkMain("pbs_sched", nil, []string{dir}, &fifo.Policy{}); got != CheckOK {
		t.Errorf("shipped files: status %d", got)
	}
}

// remarkPolicy is the FIFO policy with remarks and refusals of its own,
// as a site's policy may have.
type remarkPolicy struct{ *fifo.Policy }

func (p remarkPolicy) Configure(files *schedpriv.Files, log core.Logger) error {
	s := files.Config.Prime
	if s.RoundRobin && s.StrictFIFO {
		return errors.New("strict_fifo and round_robin together")
	}
	if s.RoundRobin {
		log.Info("an info line is not a finding")
		log.Warn("round_robin is not implemented by this policy", "queues", 2)
		log.Error("but this goes on")
	}
	return p.Policy.Configure(files, log)
}
