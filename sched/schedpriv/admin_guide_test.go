package schedpriv

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The OpenPBS 2.3 Administrator Guide (Chapt Revision 1.173, §3.5.1.1)
// gives each fifo option's shipped value in braces; an option a file
// leaves out takes it. Each case drops one option from a file that sets
// every one of them to something else and checks that the guide's value
// comes back, and that the options still in the file keep theirs.
func TestConfigAdminGuideDefaults(t *testing.T) {
	t.Parallel()
	// Every braced option set away from its default, one line each.
	lines := map[string]string{
		"round_robin":      "round_robin: true all",
		"by_queue":         "by_queue: false all",
		"strict_fifo":      "strict_fifo: true all",
		"fair_share":       "fair_share: true all",
		"load_balancing":   "load_balancing: true all",
		"sort_by":          "sort_by: longest_job_first all",
		"log_filter":       "log_filter: 7",
		"dedicated_prefix": "dedicated_prefix: dd",
		"half_life":        "half_life: 2:00:00",
		"unknown_shares":   "unknown_shares: 3",
		"sync_time":        "sync_time: 10:00",
	}
	type check struct {
		guide, set func(c *Config) bool
	}
	both := func(f func(s Settings) bool) func(c *Config) bool {
		return func(c *Config) bool { return f(c.Prime) && f(c.NonPrime) }
	}
	checks := map[string]check{
		"round_robin":      {both(func(s Settings) bool { return !s.RoundRobin }), both(func(s Settings) bool { return s.RoundRobin })},
		"by_queue":         {both(func(s Settings) bool { return s.ByQueue }), both(func(s Settings) bool { return !s.ByQueue })},
		"strict_fifo":      {both(func(s Settings) bool { return !s.StrictFIFO }), both(func(s Settings) bool { return s.StrictFIFO })},
		"fair_share":       {both(func(s Settings) bool { return !s.FairShare }), both(func(s Settings) bool { return s.FairShare })},
		"load_balancing":   {both(func(s Settings) bool { return !s.LoadBalancing }), both(func(s Settings) bool { return s.LoadBalancing })},
		"sort_by":          {both(func(s Settings) bool { return s.SortBy == ShortestJobFirst }), both(func(s Settings) bool { return s.SortBy == LongestJobFirst })},
		"log_filter":       {func(c *Config) bool { return c.LogFilter == 256 }, func(c *Config) bool { return c.LogFilter == 7 }},
		"dedicated_prefix": {func(c *Config) bool { return c.DedicatedPrefix == "ded" }, func(c *Config) bool { return c.DedicatedPrefix == "dd" }},
		"half_life": {func(c *Config) bool {
			iv, f := c.Decay()
			return c.HalfLife == 24*time.Hour && iv == 24*time.Hour && f == 0.5
		}, func(c *Config) bool { return c.HalfLife == 2*time.Hour }},
		"unknown_shares": {func(c *Config) bool { return c.UnknownShares == 10 }, func(c *Config) bool { return c.UnknownShares == 3 }},
		"sync_time":      {func(c *Config) bool { return c.SyncTime == time.Hour }, func(c *Config) bool { return c.SyncTime == 10*time.Minute }},
	}
	names := make([]string, 0, len(lines))
	for n := range lines {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, absent := range names {
		t.Run(absent, func(t *testing.T) {
			var text []string
			for _, n := range names {
				if n != absent {
					text = append(text, lines[n])
				}
			}
			c, err := ParseConfig(strings.NewReader(strings.Join(text, "\n")), ConfigFile)
			if err != nil {
				t.Fatalf("a file without %s is refused: %v", absent, err)
			}
			if !checks[absent].guide(c) {
				t.Errorf("without %s: %+v; want the admin guide's default", absent, c)
			}
			for _, n := range names {
				if n != absent && !checks[n].set(c) {
					t.Errorf("without %s, %s lost the file's value: %+v", absent, n, c)
				}
			}
		})
	}
	// An empty file is all of them at once.
	c := parseConfigString(t, "")
	for _, n := range names {
		if !checks[n].guide(c) {
			t.Errorf("empty file: %s is not the admin guide's default: %+v", n, c)
		}
	}
}

func readAdminGuide(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "admin_guide", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The guide's "Example of a scheduling config file" (§3.5.1.2, reproduced
// in testdata/admin_guide/sched_config) turns fair share on in prime time
// and leaves half_life out: it loads, with usage halving every 24 hours as
// the guide's default says, rather than being refused (half_life 0), which
// kept a site copying it on its old policy.
func TestConfigAdminGuideExample(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig(strings.NewReader(readAdminGuide(t, "sched_config")), ConfigFile)
	if err != nil {
		t.Fatalf("the admin guide's example is refused: %v", err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].String(), "debug_level") {
		t.Errorf("warnings %v, want one about debug_level", c.Warnings)
	}
	p, np := c.Prime, c.NonPrime
	if !p.FairShare || np.FairShare || !p.ByQueue || np.ByQueue || !p.HelpStarvingJobs || np.HelpStarvingJobs ||
		!p.StrictFIFO || !np.StrictFIFO || p.RoundRobin || np.RoundRobin {
		t.Errorf("switches: prime %+v non-prime %+v", p, np)
	}
	keys := []SortKey{ShortestJobFirst, SmallestMemoryFirst, HighPriorityFirst}
	if p.SortBy != MultiSort || !slices.Equal(p.Keys, keys) || np.SortBy != MultiSort || !slices.Equal(np.Keys, keys) {
		t.Errorf("sort: prime %s %v non-prime %s %v", p.SortBy, p.Keys, np.SortBy, np.Keys)
	}
	if iv, f := c.Decay(); iv != 24*time.Hour || f != 0.5 {
		t.Errorf("decay every %v by %v, want the guide's half_life 24:00:00", iv, f)
	}
	if c.MaxStarve != 24*time.Hour || c.UnknownShares != 10 || c.SyncTime != time.Hour || c.LogFilter != 256 || c.DedicatedPrefix != "ded" {
		t.Errorf("values: %+v", c)
	}
}

// The guide's multi_sort example under "key" misspells shortest_job_first
// (testdata/admin_guide/sched_config_keys, as printed). The line is
// refused like an unknown option name, naming the sort meant; with the
// spelling fixed the example loads.
func TestConfigAdminGuideKeyTypo(t *testing.T) {
	t.Parallel()
	text := readAdminGuide(t, "sched_config_keys")
	_, err := ParseConfig(strings.NewReader(text), "sched_config_keys")
	wantProblems(t, err, `sched_config_keys:2: key: unknown sort "sortest_job_first"; did you mean shortest_job_first?`)

	fixed := strings.Replace(text, "sortest_job_first", "shortest_job_first", 1)
	c, err := ParseConfig(strings.NewReader(fixed), "sched_config_keys")
	if err != nil {
		t.Fatalf("the example with the spelling fixed: %v", err)
	}
	if want := []SortKey{ShortestJobFirst, SmallestMemoryFirst, HighPriorityFirst}; !slices.Equal(c.Prime.Keys, want) {
		t.Errorf("keys %v, want %v", c.Prime.Keys, want)
	}
	// sort_by's value is checked the same way.
	_, err = ParseConfig(strings.NewReader("sort_by: sortest_job_first"), ConfigFile)
	wantProblems(t, err, `sched_config:1: sort_by: unknown sort "sortest_job_first"; did you mean shortest_job_first?`)
}

// With ded the default, dedicated_prefix: "" is how a file says it has no
// dedicated-time queues, and Format writes it so.
func TestConfigNoDedicatedPrefix(t *testing.T) {
	t.Parallel()
	c := parseConfigString(t, `dedicated_prefix: ""`)
	if c.DedicatedPrefix != "" || c.IsDedicatedQueue("dedtime") {
		t.Fatalf("dedicated_prefix %q", c.DedicatedPrefix)
	}
	var buf strings.Builder
	if err := c.Format(&buf); err != nil {
		t.Fatal(err)
	}
	back := parseConfigString(t, buf.String())
	if back.DedicatedPrefix != "" {
		t.Errorf("round trip gave dedicated_prefix %q:\n%s", back.DedicatedPrefix, buf.String())
	}
}

// A file that decays usage with OpenPBS's fairshare_decay_time and has no
// half_life line decays as it says: the default half_life does not win.
func TestConfigDecayTimeWithoutHalfLife(t *testing.T) {
	t.Parallel()
	c := parseConfigString(t, "fair_share: true\nfairshare_decay_time: 6:00:00\nfairshare_decay_factor: 0.7")
	if iv, f := c.Decay(); iv != 6*time.Hour || f != 0.7 {
		t.Errorf("decay every %v by %v, want 6h by 0.7", iv, f)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings: %v", c.Warnings)
	}
	var buf strings.Builder
	if err := c.Format(&buf); err != nil {
		t.Fatal(err)
	}
	back := parseConfigString(t, buf.String())
	a, b := *c, *back
	a.Warnings, b.Warnings = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("round trip changed the config:\n%+v\n%+v", a, b)
	}
	// Both given: half_life wins, as before.
	c = parseConfigString(t, "fair_share: true\nhalf_life: 1:00:00\nfairshare_decay_time: 6:00:00")
	if iv, _ := c.Decay(); iv != time.Hour {
		t.Errorf("decay every %v, want half_life's 1h", iv)
	}
}
