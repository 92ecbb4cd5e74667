package schedpriv

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func parseConfigString(t *testing.T, text string) *Config {
	t.Helper()
	c, err := ParseConfig(strings.NewReader(text), "sched_config")
	if err != nil {
		t.Fatalf("ParseConfig(%q): %v", text, err)
	}
	return c
}

func TestConfigFixture(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig(openFixture(t, "sched_config"), "sched_config")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings: %v", c.Warnings)
	}
	for _, prime := range []bool{true, false} {
		s := c.Active(prime)
		if !s.ByQueue {
			t.Errorf("prime=%v: by_queue false, want true (set by separate prime and non_prime lines)", prime)
		}
		if s.RoundRobin || s.StrictFIFO || s.FairShare || s.LoadBalancing {
			t.Errorf("prime=%v: round_robin/strict_fifo/fair_share/load_balancing should be false: %+v", prime, s)
		}
		if !s.HelpStarvingJobs || !s.SortQueues {
			t.Errorf("prime=%v: help_starving_jobs and sort_queues (no colon in the file) should be true", prime)
		}
		if s.SortBy != ShortestJobFirst {
			t.Errorf("prime=%v: sort_by = %q, want shortest_job_first", prime, s.SortBy)
		}
	}
	if c.LogFilter != 256 {
		t.Errorf("log_filter = %d", c.LogFilter)
	}
	if c.DedicatedPrefix != "ded" {
		t.Errorf("dedicated_prefix = %q", c.DedicatedPrefix)
	}
	if c.MaxStarve != 24*time.Hour || c.HalfLife != 24*time.Hour {
		t.Errorf("max_starve %v half_life %v, want 24h", c.MaxStarve, c.HalfLife)
	}
	if c.UnknownShares != 10 {
		t.Errorf("unknown_shares = %d", c.UnknownShares)
	}
	if c.SyncTime != time.Hour {
		t.Errorf("sync_time = %v", c.SyncTime)
	}
	if len(c.IgnoreQueues) != 0 {
		t.Errorf("ignore_queue is commented out in the fixture, got %v", c.IgnoreQueues)
	}
	if !c.IsDedicatedQueue("dedtime") || c.IsDedicatedQueue("workq") || c.IsDedicatedQueue("de") {
		t.Error("IsDedicatedQueue wrong for prefix ded")
	}
}

func TestConfigEmptyIsDefaults(t *testing.T) {
	t.Parallel()
	c := parseConfigString(t, "# nothing\n\n* still nothing\n")
	want := NewConfig()
	if !reflect.DeepEqual(c, want) {
		t.Errorf("empty file gave %+v, want %+v", c, want)
	}
	if c.Prime.SortBy != ShortestJobFirst || !c.Prime.ByQueue || c.Prime.SMPClusterDist != "pack" || c.FairshareDecayFactor != 0.5 {
		t.Errorf("defaults: %+v", c)
	}
}

func TestConfigOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		text  string
		check func(c *Config) bool
	}{
		{"bool colon", "round_robin: true", func(c *Config) bool { return c.Prime.RoundRobin && c.NonPrime.RoundRobin }},
		{"bool no colon tab", "round_robin\ttrue\tALL", func(c *Config) bool { return c.Prime.RoundRobin && c.NonPrime.RoundRobin }},
		{"bool space colon space", "round_robin : TRUE", func(c *Config) bool { return c.Prime.RoundRobin }},
		{"bool mixed case", "by_queue: tRuE", func(c *Config) bool { return c.Prime.ByQueue }},
		{"bool False", "by_queue: True\nby_queue: False", func(c *Config) bool { return !c.Prime.ByQueue && !c.NonPrime.ByQueue }},
		{"prime only", "strict_fifo: true prime", func(c *Config) bool { return c.Prime.StrictFIFO && !c.NonPrime.StrictFIFO }},
		{"non_prime only", "strict_fifo: true NON_PRIME", func(c *Config) bool { return !c.Prime.StrictFIFO && c.NonPrime.StrictFIFO }},
		{"none applies nowhere", "strict_fifo: true none", func(c *Config) bool { return !c.Prime.StrictFIFO && !c.NonPrime.StrictFIFO }},
		{"all", "strict_fifo: true All", func(c *Config) bool { return c.Prime.StrictFIFO && c.NonPrime.StrictFIFO }},
		{"strict_ordering alias", "strict_ordering: true prime", func(c *Config) bool { return c.Prime.StrictFIFO && !c.NonPrime.StrictFIFO }},
		{"fair_share", "fair_share: true\nhalf_life: 1:00:00", func(c *Config) bool { return c.Prime.FairShare && c.HalfLife == time.Hour }},
		{"load_balancing", "load_balancing: true", func(c *Config) bool { return c.Prime.LoadBalancing }},
		{"load_balancing_rr", "load_balancing_rr: true non_prime", func(c *Config) bool { return c.NonPrime.LoadBalancingRR && !c.Prime.LoadBalancingRR }},
		{"help_starving_jobs", "help_starving_jobs: true\nmax_starve: 90", func(c *Config) bool {
			return c.Prime.HelpStarvingJobs && c.MaxStarve == 90*time.Second
		}},
		{"sort_queues", "sort_queues true", func(c *Config) bool { return c.Prime.SortQueues }},
		{"sort_by per side", "sort_by: longest_job_first prime\nsort_by: high_priority_first non_prime", func(c *Config) bool {
			return c.Prime.SortBy == LongestJobFirst && c.NonPrime.SortBy == HighPriorityFirst
		}},
		{"multi_sort keys", "sort_by: multi_sort\nkey: high_priority_first\nkey: shortest_job_first", func(c *Config) bool {
			want := []SortKey{HighPriorityFirst, ShortestJobFirst}
			return slices.Equal(c.Prime.Keys, want) && slices.Equal(c.NonPrime.Keys, want)
		}},
		{
			// The classic parser dropped non_prime keys and gave prime keys
			// to both sides; each key goes to its own side here.
			"key non_prime works",
			"sort_by: multi_sort\nkey: fair_share prime\nkey: short_walltime_first non_prime\nkey: low_priority_first",
			func(c *Config) bool {
				return slices.Equal(c.Prime.Keys, []SortKey{FairShareSort, LowPriorityFirst}) &&
					slices.Equal(c.NonPrime.Keys, []SortKey{ShortWalltimeFirst, LowPriorityFirst})
			},
		},
		{"log_filter", "log_filter: 511", func(c *Config) bool { return c.LogFilter == 511 }},
		{"dedicated_prefix 15 chars", "dedicated_prefix: abcdefghijklmno", func(c *Config) bool { return c.DedicatedPrefix == "abcdefghijklmno" }},
		{"ignore_queue list", "ignore_queue: a\nignore_queue b", func(c *Config) bool {
			return slices.Equal(c.IgnoreQueues, []string{"a", "b"}) && c.IsIgnoredQueue("b") && !c.IsIgnoredQueue("c")
		}},
		{"ignore_queue 16", strings.Repeat("ignore_queue: q\n", 16), func(c *Config) bool { return len(c.IgnoreQueues) == 16 }},
		{"max_starve M:S", "max_starve: 5:30", func(c *Config) bool { return c.MaxStarve == 330*time.Second }},
		{"max_starve long hours", "max_starve: 100:00:00", func(c *Config) bool { return c.MaxStarve == 100*time.Hour }},
		{"unknown_shares", "unknown_shares: 0", func(c *Config) bool { return c.UnknownShares == 0 }},
		{"sync_time seconds", "sync_time: 600", func(c *Config) bool { return c.SyncTime == 10*time.Minute }},
		{"trailing comment", "by_queue: true all # why not", func(c *Config) bool { return c.Prime.ByQueue }},
		{"trailing comment no suffix", "log_filter: 7 # debug", func(c *Config) bool { return c.LogFilter == 7 }},
		{"CRLF line ends", "by_queue: true\r\nlog_filter: 3\r\n", func(c *Config) bool { return c.Prime.ByQueue && c.LogFilter == 3 }},
		{"leading white space", "   \tby_queue: true", func(c *Config) bool { return c.Prime.ByQueue }},
		{"later line wins", "log_filter: 1\nlog_filter: 2", func(c *Config) bool { return c.LogFilter == 2 }},
		{"none still keeps other side", "by_queue: true\nby_queue: false none", func(c *Config) bool { return c.Prime.ByQueue }},
		{"all on a no-suffix option", "log_filter: 4 all", func(c *Config) bool { return c.LogFilter == 4 }},
		{"none on a no-suffix option", "log_filter: 4 none", func(c *Config) bool { return c.LogFilter == DefaultLogFilter }},

		// OpenPBS options.
		{"backfill on by default", "by_queue: true", func(c *Config) bool {
			return c.Prime.Backfill && c.NonPrime.Backfill && c.BackfillDepth == DefaultBackfillDepth
		}},
		{"backfill off", "backfill: false", func(c *Config) bool { return !c.Prime.Backfill && !c.NonPrime.Backfill }},
		{"backfill off ALL", "backfill\tFALSE\tALL", func(c *Config) bool { return !c.Prime.Backfill && !c.NonPrime.Backfill }},
		{"backfill prime only", "backfill: false\nbackfill: true prime", func(c *Config) bool { return c.Prime.Backfill && !c.NonPrime.Backfill }},
		{"backfill off in non_prime", "backfill: false non_prime", func(c *Config) bool { return c.Prime.Backfill && !c.NonPrime.Backfill }},
		{"backfill off in prime", "backfill: False PRIME", func(c *Config) bool { return !c.Prime.Backfill && c.NonPrime.Backfill }},
		{"backfill none", "backfill: false none", func(c *Config) bool { return c.Prime.Backfill && c.NonPrime.Backfill }},
		{"backfill_depth", "backfill_depth: 50", func(c *Config) bool { return c.BackfillDepth == 50 }},
		{"backfill_depth 1", "backfill_depth 1", func(c *Config) bool { return c.BackfillDepth == 1 }},
		{"backfill_depth all", "backfill_depth: all", func(c *Config) bool { return c.BackfillDepth == BackfillDepthAll }},
		{"backfill_depth ALL all", "backfill_depth: ALL all", func(c *Config) bool { return c.BackfillDepth == BackfillDepthAll }},
		{"backfill_depth later line wins", "backfill_depth: all\nbackfill_depth: 007", func(c *Config) bool { return c.BackfillDepth == 7 }},
		{"backfill_depth none", "backfill_depth: 5 none", func(c *Config) bool { return c.BackfillDepth == DefaultBackfillDepth }},
		{"backfill_depth with backfill off", "backfill: false\nbackfill_depth: 10", func(c *Config) bool {
			return !c.Prime.Backfill && c.BackfillDepth == 10 && len(c.Warnings) == 0
		}},
		{"backfill_prime + prime_spill quoted", "backfill_prime: true\nprime_spill: \"2:00:00\" PRIME", func(c *Config) bool {
			return c.Prime.BackfillPrime && c.Prime.PrimeSpill == 2*time.Hour && c.NonPrime.PrimeSpill == 0
		}},
		{"primetime prefixes", "primetime_prefix: p_\nnonprimetime_prefix: np_", func(c *Config) bool {
			return c.PrimetimePrefix == "p_" && c.NonprimetimePrefix == "np_"
		}},
		{"prime_exempt_anytime_queues", "prime_exempt_anytime_queues: true", func(c *Config) bool { return c.PrimeExemptAnytimeQueues }},
		{"job_sort_key quoted", "job_sort_key: \"ncpus HIGH\"\tALL\njob_sort_key: \"mem LOW\"", func(c *Config) bool {
			want := []ResourceSort{{"ncpus", true}, {"mem", false}}
			return slices.Equal(c.Prime.JobSortKeys, want) && slices.Equal(c.NonPrime.JobSortKeys, want)
		}},
		{"job_sort_key unquoted with suffix", "job_sort_key: cput low prime", func(c *Config) bool {
			return slices.Equal(c.Prime.JobSortKeys, []ResourceSort{{"cput", false}}) && len(c.NonPrime.JobSortKeys) == 0
		}},
		{"node_sort_key", "node_sort_key: \"sort_priority HIGH\"\tALL", func(c *Config) bool {
			return slices.Equal(c.NonPrime.NodeSortKeys, []ResourceSort{{"sort_priority", true}})
		}},
		{"resources", "resources: \"ncpus, mem, arch, host, vnode, aoe, eoe\"", func(c *Config) bool {
			return slices.Equal(c.Resources, []string{"ncpus", "mem", "arch", "host", "vnode", "aoe", "eoe"})
		}},
		{"smp_cluster_dist", "smp_cluster_dist: lowest_load non_prime", func(c *Config) bool {
			return c.NonPrime.SMPClusterDist == "lowest_load" && c.Prime.SMPClusterDist == "pack"
		}},
		{"fairshare options", "fairshare_usage_res: ncpus*walltime\nfairshare_entity: egroup:euser\nfairshare_decay_time: 12:00:00\nfairshare_decay_factor: 0.7\nfairshare_enforce_no_shares: TRUE", func(c *Config) bool {
			iv, f := c.Decay()
			return c.FairshareUsageRes == UsageHeld && c.FairshareEntity == "egroup:euser" &&
				iv == 12*time.Hour && f == 0.7 && c.FairshareEnforceNoShares
		}},
		{"activation filters", "activation_filter: /opt/f/licenses\nactivation_filter: \"/opt/my filters/b\"\nfilter_timeout: 30\ndefault_hold_duration: 1:00:00", func(c *Config) bool {
			return slices.Equal(c.ActivationFilters, []string{"/opt/f/licenses", "/opt/my filters/b"}) &&
				c.FilterTimeout == 30*time.Second && c.DefaultHoldDuration == time.Hour
		}},
		{"activation filter defaults", "", func(c *Config) bool {
			return len(c.ActivationFilters) == 0 && c.FilterTimeout == 15*time.Second && c.DefaultHoldDuration == 900*time.Second
		}},
		{"fair_share with fairshare_decay_time only", "fair_share: true\nfairshare_decay_time: 24:00:00", func(c *Config) bool {
			iv, f := c.Decay()
			return c.FairShareAny() && iv == 24*time.Hour && f == 0.5
		}},
		{"job_sort_formula", "job_sort_formula: \"eligible_time + 3600 * fairshare_factor\"\nfair_share: true\nhalf_life: 24:00:00", func(c *Config) bool {
			f := c.JobSortFormula
			return f != nil && f.String() == "eligible_time + 3600 * fairshare_factor" && f.UsesFairshare()
		}},
		{"job_sort_formula unquoted, no spaces, suffix", "job_sort_formula: ncpus*walltime all", func(c *Config) bool {
			return c.JobSortFormula != nil && c.JobSortFormula.String() == "ncpus*walltime" && !c.JobSortFormula.UsesFairshare()
		}},
		{"job_sort_formula later line wins", "job_sort_formula: ncpus\njob_sort_formula: \"job_priority * 10\"", func(c *Config) bool {
			return c.JobSortFormula.String() == "job_priority * 10"
		}},
		{"job_sort_formula none", "job_sort_formula: ncpus none", func(c *Config) bool { return c.JobSortFormula == nil }},
		// Fair-share terms without fair_share: usage is counted for the
		// formula, with the decay configured.
		{"job_sort_formula fair-share terms, fair_share off", "job_sort_formula: fairshare_factor\nhalf_life: 1:00:00", func(c *Config) bool {
			return c.JobSortFormula.UsesFairshare() && !c.FairShareAny()
		}},
		{"no job_sort_formula", "", func(c *Config) bool { return c.JobSortFormula == nil }},
		{"preemptive_sched", "preemptive_sched: true ALL", func(c *Config) bool { return c.Prime.PreemptiveSched && c.NonPrime.PreemptiveSched }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseConfigString(t, tt.text)
			if !tt.check(c) {
				t.Errorf("unexpected result for %q: %+v", tt.text, c)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want []string
	}{
		// The classic parser took any word but false as true.
		{"bool yes", "round_robin: yes", []string{`sched_config:1: round_robin: "yes" is not a boolean`}},
		{"bool off", "\nby_queue: off ALL", []string{`sched_config:2: by_queue: "off" is not a boolean`}},
		{"bool TRUEly", "by_queue: TRUEly", []string{`sched_config:1: by_queue: "TRUEly" is not a boolean`}},
		{"bool 1", "by_queue: 1", []string{`sched_config:1: by_queue: "1" is not a boolean`}},
		// The classic parser ignored unknown names.
		{"unknown option", "# c\nround_robbin: true", []string{`sched_config:2: unknown option "round_robbin"`}},
		{"option case matters", "By_Queue: true", []string{`sched_config:1: unknown option "By_Queue"`}},
		{"missing value", "by_queue:", []string{"sched_config:1: by_queue: missing value"}},
		{"relative filter", "activation_filter: f", []string{`sched_config:1: activation_filter: "f" is not an absolute path`}},
		{"filter with comma", "activation_filter: /a,b", []string{`sched_config:1: activation_filter: "/a,b" contains a comma`}},
		{"filter prime", "activation_filter: /a prime", []string{`sched_config:1: activation_filter has no prime/non-prime setting`}},
		{"filter timeout 0", "filter_timeout: 0", []string{`sched_config:1: filter_timeout: "0": a filter needs at least a second`}},
		{"hold too short", "default_hold_duration: 59", []string{`sched_config:1: default_hold_duration: "59" is not between 60 and 604800 seconds`}},
		{"hold too long", "default_hold_duration: 604801", []string{`sched_config:1: default_hold_duration: "604801" is not between 60 and 604800 seconds`}},
		{"missing value comment", "by_queue: # x", []string{"sched_config:1: by_queue: missing value"}},
		{"missing name", ": true", []string{"sched_config:1: missing option name"}},
		{"bad suffix", "by_queue: true sometimes", []string{`sched_config:1: by_queue: "sometimes" is not prime`}},
		{"extra word", "by_queue: true all more", []string{`sched_config:1: by_queue: unexpected "more"`}},
		{"suffix on global", "log_filter: 1 prime", []string{"sched_config:1: log_filter has no prime/non-prime setting"}},
		{"bad sort", "sort_by: fastest_first", []string{`sched_config:1: sort_by: unknown sort "fastest_first"`}},
		{"sort case", "sort_by: No_Sort", []string{`sched_config:1: sort_by: unknown sort "No_Sort"`}},
		{"key multi_sort", "key: multi_sort", []string{"sched_config:1: key: multi_sort cannot be a key"}},
		{"key no_sort", "key: no_sort", []string{"sched_config:1: key: no_sort cannot be a key"}},
		{"multi_sort without keys", "sort_by: multi_sort", []string{"sched_config:1: sort_by multi_sort in prime time needs key lines", "sched_config:1: sort_by multi_sort in non-prime time"}},
		{"multi_sort keys on one side", "sort_by: multi_sort\nkey: fair_share prime", []string{"sched_config:1: sort_by multi_sort in non-prime time needs key lines"}},
		{"log_filter word", "log_filter: lots", []string{`sched_config:1: log_filter: "lots" is not a non-negative integer`}},
		{"log_filter negative", "log_filter: -1", []string{`sched_config:1: log_filter: "-1" is not a non-negative integer`}},
		{"log_filter huge", "log_filter: 99999999999999999999999", []string{"sched_config:1: log_filter: \"99999999999999999999999\" is too large"}},
		{"dedicated_prefix too long", "dedicated_prefix: abcdefghijklmnop", []string{"sched_config:1: dedicated_prefix: \"abcdefghijklmnop\" is longer than 15"}},
		{"dedicated_prefix with space", "dedicated_prefix: \"a b\"", []string{"sched_config:1: dedicated_prefix: \"a b\" is not a valid name"}},
		{"ignore_queue 17", strings.Repeat("ignore_queue: q\n", 17), []string{"sched_config:17: ignore_queue: more than 16 queues ignored"}},
		{"max_starve word", "max_starve: long", []string{"sched_config:1: max_starve: bad time \"long\""}},
		{"max_starve minutes 60", "max_starve: 1:60:00", []string{"sched_config:1: max_starve: bad time \"1:60:00\": minutes and seconds must be below 60"}},
		{"max_starve 4 parts", "max_starve: 1:1:1:1", []string{"sched_config:1: max_starve: bad time"}},
		{"max_starve empty part", "max_starve: 1::00", []string{"sched_config:1: max_starve: bad time"}},
		{"max_starve overflow", "max_starve: 9999999999999:00:00", []string{"sched_config:1: max_starve: time \"9999999999999:00:00\" is too large"}},
		{"half_life negative", "half_life: -5", []string{"sched_config:1: half_life: bad time"}},
		{"unknown_shares float", "unknown_shares: 1.5", []string{"sched_config:1: unknown_shares: \"1.5\" is not a non-negative integer"}},
		{"unterminated quote", "resources: \"ncpus, mem", []string{"sched_config:1: resources: unterminated quoted value"}},
		{"text after quote", "resources: \"ncpus\"x", []string{"sched_config:1: resources: text right after a closing quote"}},
		{"empty resources", "resources: \" , \"", []string{"sched_config:1: resources: empty list"}},
		{"sort key no direction", "job_sort_key: \"ncpus\"", []string{"sched_config:1: job_sort_key: want \"resource HIGH\""}},
		{"sort key bad direction", "job_sort_key: \"ncpus UP\"", []string{"sched_config:1: job_sort_key: sort direction \"UP\""}},
		{"smp_cluster_dist", "smp_cluster_dist: scatter", []string{"sched_config:1: smp_cluster_dist: \"scatter\" is not pack"}},
		{"fairshare_entity", "fairshare_entity: project", []string{"sched_config:1: fairshare_entity: \"project\" is not euser"}},
		{"decay factor 1", "fairshare_decay_factor: 1", []string{"sched_config:1: fairshare_decay_factor: \"1\" is not a number between 0 and 1"}},
		{"decay factor NaN", "fairshare_decay_factor: NaN", []string{"sched_config:1: fairshare_decay_factor: \"NaN\""}},
		// Pitfalls that hang or starve the classic scheduler.
		{"fair_share half_life 0", "fair_share: true\nhalf_life: 0", []string{"sched_config:1: fair_share is on but half_life is 0"}},
		{"fair_share non_prime half_life 0", "\nhalf_life: 0\nfair_share: true non_prime", []string{"sched_config:3: fair_share is on but half_life is 0"}},
		{"help_starving max_starve 0", "max_starve: 0\nhelp_starving_jobs: true prime", []string{"sched_config:2: help_starving_jobs is on but max_starve is 0"}},
		{"bad value with none suffix is still an error", "by_queue: maybe none", []string{`sched_config:1: by_queue: "maybe" is not a boolean`}},
		// Backfilling.
		{"backfill word", "backfill: on", []string{`sched_config:1: backfill: "on" is not a boolean`}},
		{"backfill bad suffix", "backfill: true daytime", []string{`sched_config:1: backfill: "daytime" is not prime`}},
		{"backfill_depth 0", "\nbackfill_depth: 0", []string{"sched_config:2: backfill_depth: 0 jobs: to turn backfilling off write backfill: false"}},
		{"backfill_depth 000", "backfill_depth: 000", []string{"sched_config:1: backfill_depth: 0 jobs"}},
		{"backfill_depth negative", "backfill_depth: -1", []string{`sched_config:1: backfill_depth: "-1" is not a positive number of jobs or all`}},
		{"backfill_depth word", "backfill_depth: everything", []string{`sched_config:1: backfill_depth: "everything" is not a positive number of jobs or all`}},
		{"backfill_depth float", "backfill_depth: 1.5", []string{`sched_config:1: backfill_depth: "1.5" is not a positive number`}},
		{"backfill_depth huge", "backfill_depth: 99999999999999999999999", []string{`sched_config:1: backfill_depth: "99999999999999999999999" is too large`}},
		{"backfill_depth prime", "backfill_depth: 10 prime", []string{"sched_config:1: backfill_depth has no prime/non-prime setting"}},
		{"backfill_depth non_prime", "backfill_depth: all non_prime", []string{"sched_config:1: backfill_depth has no prime/non-prime setting"}},
		{"backfill_depth missing", "backfill_depth:", []string{"sched_config:1: backfill_depth: missing value"}},
		// job_sort_formula: the column, and the nearest name for a typo.
		{"formula unknown term", "job_sort_formula: \"eligible_time + 3600 * fairshare_fator\"", []string{`sched_config:1: job_sort_formula: column 24: unknown term "fairshare_fator"; did you mean fairshare_factor?`}},
		{"formula unknown function", "job_sort_formula: \"powr(2, ncpus)\"", []string{`sched_config:1: job_sort_formula: column 1: unknown function "powr"; did you mean pow?`}},
		{"formula nothing near", "job_sort_formula: \"1 + zzzzzzzzzz\"", []string{`sched_config:1: job_sort_formula: column 5: unknown term "zzzzzzzzzz"`}},
		{"formula syntax", "job_sort_formula: \"(ncpus + 1\"", []string{"sched_config:1: job_sort_formula: column 1: unclosed parenthesis"}},
		{"formula conditional", "job_sort_formula: \"ncpus if ncpus else 1\"", []string{"sched_config:1: job_sort_formula: column 7: conditional expressions (x if c else y) are not supported"}},
		{"formula empty", "job_sort_formula: \"\"", []string{"sched_config:1: job_sort_formula: column 1: empty formula"}},
		{"formula unquoted with spaces", "job_sort_formula: eligible_time + 1", []string{`sched_config:1: job_sort_formula: a value with white space goes in double quotes (job_sort_formula: "eligible_time ...")`}},
		{"resources unquoted with spaces", "resources: ncpus, mem", []string{`sched_config:1: resources: a value with white space goes in double quotes`}},
		{"formula prime", "job_sort_formula: ncpus prime", []string{"sched_config:1: job_sort_formula has no prime/non-prime setting"}},
		{"formula fair-share terms without decay", "half_life: 0\njob_sort_formula: \"eligible_time + 3600 * fairshare_factor\"", []string{"sched_config:2: job_sort_formula reads the fair-share standing but half_life is 0"}},
		{"backfill_depth bad with none", "backfill_depth: 0 none", []string{"sched_config:1: backfill_depth: 0 jobs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig(strings.NewReader(tt.text), "sched_config")
			if c != nil {
				t.Errorf("got a config despite errors")
			}
			wantProblems(t, err, tt.want...)
		})
	}
}

// Every problem is reported, each with its own line, not just the first.
func TestConfigAllErrorsReported(t *testing.T) {
	t.Parallel()
	text := "by_queue: yes\nlog_filter: 1\nnonsense: 1\nsort_by: fastest\nmax_starve: soon\n"
	_, err := ParseConfig(strings.NewReader(text), "/pbs/sched_priv/sched_config")
	wantProblems(t, err,
		"/pbs/sched_priv/sched_config:1: by_queue",
		"/pbs/sched_priv/sched_config:3: unknown option",
		"/pbs/sched_priv/sched_config:4: sort_by",
		"/pbs/sched_priv/sched_config:5: max_starve",
	)
	if got := err.Error(); strings.Count(got, "\n") != 3 {
		t.Errorf("Error() should list one problem per line:\n%s", got)
	}
}

func TestConfigWarnings(t *testing.T) {
	t.Parallel()
	c := parseConfigString(t, "sort_by: fair_share\n\nkey: shortest_job_first\nprovision_policy: \"avoid_provision\"\nhalf_life: 1:00:00\nfairshare_decay_time: 2:00:00\n")
	var got []string
	for _, w := range c.Warnings {
		got = append(got, w.String())
	}
	want := []string{
		"sched_config:4: provision_policy is an OpenPBS option this scheduler does not implement; ignored",
		"sched_config:3: key lines for prime time are unused: sort_by is fair_share there, not multi_sort",
		"sched_config:3: key lines for non-prime time are unused: sort_by is fair_share there, not multi_sort",
		"sched_config:6: both half_life and fairshare_decay_time are set; half_life (1:00:00) is used",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if iv, f := c.Decay(); iv != time.Hour || f != 0.5 {
		t.Errorf("Decay() = %v, %v; half_life should win", iv, f)
	}
	// strict_fifo keeps a formula's order (OpenPBS's strict_ordering):
	// nothing to warn of.
	c = parseConfigString(t, "strict_fifo: true non_prime\njob_sort_formula: ncpus\n")
	if len(c.Warnings) != 0 {
		t.Errorf("strict_fifo with a formula: %v", c.Warnings)
	}
	for _, name := range IgnoredOptions() {
		c := parseConfigString(t, name+": whatever")
		if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Msg, "does not implement") {
			t.Errorf("%s: warnings %v", name, c.Warnings)
		}
	}
}

func TestActiveIsACopy(t *testing.T) {
	t.Parallel()
	c := parseConfigString(t, "sort_by: multi_sort\nkey: fair_share\njob_sort_key: \"ncpus HIGH\"\nnode_sort_key: \"mem LOW\"")
	s := c.Active(true)
	s.Keys[0] = NoSort
	s.JobSortKeys[0].Resource = "x"
	s.NodeSortKeys[0].Resource = "y"
	s.RoundRobin = true
	if c.Prime.Keys[0] != FairShareSort || c.Prime.JobSortKeys[0].Resource != "ncpus" ||
		c.Prime.NodeSortKeys[0].Resource != "mem" || c.Prime.RoundRobin {
		t.Error("changing Active's result changed the config")
	}
	np := c.Active(false)
	if !reflect.DeepEqual(np, c.NonPrime) {
		t.Errorf("Active(false) = %+v, want %+v", np, c.NonPrime)
	}
}

func TestSortKeySpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key      SortKey
		source   SortSource
		resource string
		desc     bool
	}{
		{NoSort, SourceNone, "", false},
		{ShortestJobFirst, SourceResource, "cput", false},
		{LongestJobFirst, SourceResource, "cput", true},
		{SmallestMemoryFirst, SourceResource, "mem", false},
		{LargestMemoryFirst, SourceResource, "mem", true},
		{HighPriorityFirst, SourcePriority, "", true},
		{LowPriorityFirst, SourcePriority, "", false},
		{LargeWalltimeFirst, SourceResource, "walltime", true},
		{ShortWalltimeFirst, SourceResource, "walltime", false},
		{FairShareSort, SourceFairShare, "", true},
		{MultiSort, SourceMulti, "", false},
	}
	if len(tests) != len(SortKeys()) {
		t.Fatalf("table covers %d keys, SortKeys has %d", len(tests), len(SortKeys()))
	}
	for i, tt := range tests {
		if SortKeys()[i] != tt.key {
			t.Errorf("SortKeys()[%d] = %s, want %s", i, SortKeys()[i], tt.key)
		}
		s, ok := tt.key.Spec()
		if !ok || s.Source != tt.source || s.Resource != tt.resource || s.Descending != tt.desc || s.Key != tt.key {
			t.Errorf("%s.Spec() = %+v, %v", tt.key, s, ok)
		}
		c := parseConfigString(t, "sort_by: "+string(tt.key)+"\nkey: shortest_job_first")
		if c.Prime.SortBy != tt.key {
			t.Errorf("sort_by %s parsed as %s", tt.key, c.Prime.SortBy)
		}
	}
	if SortKey("bogus").Valid() {
		t.Error("bogus is not a sort")
	}
}

func TestConfigFormatRoundTrip(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"",
		"by_queue: true prime\nround_robin: true non_prime\nsort_by: multi_sort\nkey: fair_share prime\nkey: shortest_job_first\nkey: low_priority_first non_prime\nfair_share: true\nhalf_life: 1:02:03",
		"ignore_queue: a\nignore_queue: b\ndedicated_prefix: ded\nlog_filter: 256\nmax_starve: 3600\nhelp_starving_jobs: true\nunknown_shares: 7\nsync_time: 10:00",
		"backfill: false non_prime\nbackfill_depth: all",
		"backfill: false\nbackfill_depth: 1",
		"activation_filter: /a\nactivation_filter: \"/b c\"\nfilter_timeout: 2\ndefault_hold_duration: 60",
		"backfill: false prime\nbackfill_depth: 123456",
		"job_sort_formula: \"eligible_time + 3600 * fairshare_factor\"\nfair_share: true\nhalf_life: 6:00:00",
		"job_sort_formula: -2**ncpus//3",
		"strict_ordering: true prime\nbackfill: true\nbackfill_prime: true non_prime\nprime_spill: 1:00:00 prime\njob_sort_key: \"ncpus HIGH\"\njob_sort_key: \"mem LOW\" non_prime\nnode_sort_key: \"sort_priority HIGH\"\nresources: \"ncpus, mem\"\nsmp_cluster_dist: round_robin\nprimetime_prefix: p_\nnonprimetime_prefix: np_\nfairshare_usage_res: cput\nfairshare_entity: queue\nfairshare_decay_time: 24:00:00\nfairshare_decay_factor: 0.25\nfairshare_enforce_no_shares: true\nprime_exempt_anytime_queues: true\npreemptive_sched: true",
	}
	for _, in := range inputs {
		c := parseConfigString(t, in)
		checkConfigRoundTrip(t, c)
	}
	c, err := ParseConfig(openFixture(t, "sched_config"), "sched_config")
	if err != nil {
		t.Fatal(err)
	}
	checkConfigRoundTrip(t, c)
	// The backfill options are written back, all as the word.
	var buf bytes.Buffer
	parseConfigString(t, "backfill: false non_prime\nbackfill_depth: all").Format(&buf)
	for _, line := range []string{"backfill: true\tprime\n", "backfill: false\tnon_prime\n", "backfill_depth: all\n"} {
		if !strings.Contains(buf.String(), line) {
			t.Errorf("Format output lacks %q:\n%s", line, buf.String())
		}
	}
	buf.Reset()
	NewConfig().Format(&buf)
	if !strings.Contains(buf.String(), "backfill: true\tall\n") || !strings.Contains(buf.String(), "backfill_depth: 1000\n") {
		t.Errorf("Format of the defaults:\n%s", buf.String())
	}
}

func checkConfigRoundTrip(t *testing.T, c *Config) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Format(&buf); err != nil {
		t.Fatal(err)
	}
	c2, err := ParseConfig(bytes.NewReader(buf.Bytes()), "formatted")
	if err != nil {
		t.Fatalf("formatted config does not parse: %v\n%s", err, buf.String())
	}
	a, b := *c, *c2
	a.Warnings, b.Warnings = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("round trip changed the config:\n%+v\n%+v\n%s", a, b, buf.String())
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"0": 0, "59": 59 * time.Second, "1:00": time.Minute, "1:00:00": time.Hour,
		"24:00:00": 24 * time.Hour, "0:0:1": time.Second, "120": 2 * time.Minute,
	} {
		got, err := parseDuration(in)
		if err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, _ := parseDuration(formatDuration(got)); back != got {
			t.Errorf("formatDuration(%v) = %q does not read back", got, formatDuration(got))
		}
	}
	for _, in := range []string{"", ":", "1:", "-1", "+1", "1h", "1.5", "1:2:3:4", "0:60", "1:00:60"} {
		if _, err := parseDuration(in); err == nil {
			t.Errorf("parseDuration(%q) should fail", in)
		}
	}
}

func TestOverlongLine(t *testing.T) {
	t.Parallel()
	text := "by_queue: true\n# " + strings.Repeat("x", maxLine) + "\n"
	_, err := ParseConfig(strings.NewReader(text), "sched_config")
	wantProblems(t, err, "sched_config:2: line longer than 65536 bytes")
}
