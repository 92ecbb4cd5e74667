package schedpriv

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The options of reference §2.2's table, each with how a line sets it and
// how to see it set on one side. Options with a prime suffix are checked
// on Settings; the others on Config.
type primeOption struct {
	name string
	// prefix holds lines the option needs to be valid on its own (a
	// half_life for fair_share, a multi_sort for key).
	prefix string
	value  string
	isSet  func(s *Settings) bool
}

func sidedOptions() []primeOption {
	return []primeOption{
		{"round_robin", "", "true", func(s *Settings) bool { return s.RoundRobin }},
		{"by_queue", "", "false", func(s *Settings) bool { return !s.ByQueue }},
		{"strict_fifo", "", "true", func(s *Settings) bool { return s.StrictFIFO }},
		{"fair_share", "half_life: 1:00:00\n", "true", func(s *Settings) bool { return s.FairShare }},
		{"load_balancing", "", "true", func(s *Settings) bool { return s.LoadBalancing }},
		{"load_balancing_rr", "", "true", func(s *Settings) bool { return s.LoadBalancingRR }},
		{"help_starving_jobs", "max_starve: 24:00:00\n", "true", func(s *Settings) bool { return s.HelpStarvingJobs }},
		{"sort_queues", "", "true", func(s *Settings) bool { return s.SortQueues }},
		{"sort_by", "", "large_walltime_first", func(s *Settings) bool { return s.SortBy == LargeWalltimeFirst }},
		// A key line adds to its side's list after the key for both.
		{"key", "sort_by: multi_sort\nkey: high_priority_first\n", "shortest_job_first", func(s *Settings) bool {
			return slices.Equal(s.Keys, []SortKey{HighPriorityFirst, ShortestJobFirst})
		}},
		// Other spellings and OpenPBS's options with a suffix behave alike.
		{"strict_ordering", "", "true", func(s *Settings) bool { return s.StrictFIFO }},
		{"sort_by", "", "cmp_job_walltime_asc", func(s *Settings) bool { return s.SortBy == ShortWalltimeFirst }},
		{"sort_by", "", "short_walltime_first", func(s *Settings) bool { return s.SortBy == ShortWalltimeFirst }},
		{"backfill", "backfill: false\n", "true", func(s *Settings) bool { return s.Backfill }},
		{"backfill_prime", "", "true", func(s *Settings) bool { return s.BackfillPrime }},
		{"prime_spill", "", "1:00:00", func(s *Settings) bool { return s.PrimeSpill == time.Hour }},
		{"preemptive_sched", "", "true", func(s *Settings) bool { return s.PreemptiveSched }},
		{"job_sort_key", "", `"ncpus HIGH"`, func(s *Settings) bool { return len(s.JobSortKeys) == 1 }},
		{"node_sort_key", "", `"ncpus HIGH"`, func(s *Settings) bool { return len(s.NodeSortKeys) == 1 }},
		{"smp_cluster_dist", "", "round_robin", func(s *Settings) bool { return s.SMPClusterDist == "round_robin" }},
	}
}

// The third word of a line: which sides it sets. Any case; non-prime is the
// admin guide's spelling, non_prime the sample file's.
var suffixes = []struct {
	word            string
	prime, nonPrime bool
}{
	{"", true, true},
	{"all", true, true},
	{"ALL", true, true},
	{"prime", true, false},
	{"PRIME", true, false},
	{"non_prime", false, true},
	{"NON_PRIME", false, true},
	{"non-prime", false, true},
	{"Non-Prime", false, true},
	{"none", false, false},
	{"NONE", false, false},
}

// Every option with a prime suffix, with every suffix: the line sets the
// sides the suffix names and leaves the other as it was without the line.
func TestConfigPrimeSuffixes(t *testing.T) {
	t.Parallel()
	for _, o := range sidedOptions() {
		if base := parseConfigString(t, o.prefix); o.isSet(&base.Prime) || o.isSet(&base.NonPrime) {
			t.Fatalf("%s %s: already set without the line; the table cannot tell", o.name, o.value)
		}
		for _, sx := range suffixes {
			line := o.name + ": " + o.value
			if sx.word != "" {
				line += "\t" + sx.word
			}
			t.Run(line, func(t *testing.T) {
				c := parseConfigString(t, o.prefix+line+"\n")
				if got := o.isSet(&c.Prime); got != sx.prime {
					t.Errorf("prime side set = %v, want %v", got, sx.prime)
				}
				if got := o.isSet(&c.NonPrime); got != sx.nonPrime {
					t.Errorf("non-prime side set = %v, want %v", got, sx.nonPrime)
				}
				if a := c.Active(true); o.isSet(&a) != sx.prime {
					t.Errorf("Active(prime) disagrees with Prime")
				}
				if a := c.Active(false); o.isSet(&a) != sx.nonPrime {
					t.Errorf("Active(non-prime) disagrees with NonPrime")
				}
			})
		}
	}
}

// The options of §2.2 without a prime suffix: all or no suffix applies the
// line, none checks it and applies nothing, and prime / non_prime /
// non-prime are refused naming the option and line.
func TestConfigNoSuffixOptions(t *testing.T) {
	t.Parallel()
	opts := []struct {
		name, value string
		isSet       func(c *Config) bool
	}{
		{"log_filter", "7", func(c *Config) bool { return c.LogFilter == 7 }},
		{"dedicated_prefix", "dd", func(c *Config) bool { return c.DedicatedPrefix == "dd" }},
		{"ignore_queue", "batch", func(c *Config) bool { return slices.Equal(c.IgnoreQueues, []string{"batch"}) }},
		{"max_starve", "24:00:00", func(c *Config) bool { return c.MaxStarve == 24*time.Hour }},
		{"starve_max", "24:00:00", func(c *Config) bool { return c.MaxStarve == 24*time.Hour }},
		{"half_life", "2:00:00", func(c *Config) bool { return c.HalfLife == 2*time.Hour }},
		{"unknown_shares", "3", func(c *Config) bool { return c.UnknownShares == 3 }},
		{"sync_time", "10:00", func(c *Config) bool { return c.SyncTime == 10*time.Minute }},
		{"backfill_depth", "5", func(c *Config) bool { return c.BackfillDepth == 5 }},
		{"job_sort_formula", `"ncpus * 2"`, func(c *Config) bool { return c.JobSortFormula != nil }},
	}
	for _, o := range opts {
		if o.isSet(NewConfig()) {
			t.Fatalf("%s: already set in an empty file", o.name)
		}
		for _, sx := range suffixes {
			line := o.name + ": " + o.value
			if sx.word != "" {
				line += " " + sx.word
			}
			t.Run(line, func(t *testing.T) {
				c, err := ParseConfig(strings.NewReader("\n"+line), "sched_config")
				if sx.prime != sx.nonPrime { // prime or non-prime only
					wantProblems(t, err, "sched_config:2: "+o.name+" has no prime/non-prime setting")
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := o.isSet(c); got != sx.prime {
					t.Errorf("set = %v, want %v", got, sx.prime)
				}
			})
		}
	}
}

// The tables above cover every option of reference §2.2.
func TestConfigSection22Covered(t *testing.T) {
	t.Parallel()
	section22 := []string{
		"round_robin", "by_queue", "strict_fifo", "fair_share", "load_balancing",
		"load_balancing_rr", "help_starving_jobs", "sort_queues", "sort_by", "key",
		"log_filter", "dedicated_prefix", "ignore_queue", "max_starve", "half_life",
		"unknown_shares", "sync_time",
	}
	covered := map[string]bool{}
	for _, o := range sidedOptions() {
		covered[o.name] = true
	}
	for _, n := range []string{"log_filter", "dedicated_prefix", "ignore_queue", "max_starve", "half_life", "unknown_shares", "sync_time"} {
		covered[n] = true
	}
	known := OptionNames()
	for _, n := range section22 {
		if !covered[n] {
			t.Errorf("%s has no prime/non-prime table row", n)
		}
		if !slices.Contains(known, n) {
			t.Errorf("%s is not a known option", n)
		}
	}
	// Every sort name of §2.2 is accepted, as are the other spellings.
	for _, k := range SortKeys() {
		parseConfigString(t, "sort_by: "+string(k)+"\nkey: shortest_job_first\n")
	}
	for alias, k := range SortAliases() {
		if c := parseConfigString(t, "sort_by: multi_sort\nkey: "+alias); !slices.Equal(c.Prime.Keys, []SortKey{k}) {
			t.Errorf("key %s: keys %v, want %s", alias, c.Prime.Keys, k)
		}
	}
}

// The admin guide's other spellings read as the option they stand for, and
// Format writes the canonical name.
func TestConfigSpellings(t *testing.T) {
	t.Parallel()
	a := parseConfigString(t, "starve_max: 12:00:00\nhelp_starving_jobs: true non-prime\nsort_by: cmp_job_walltime_asc prime\nstrict_ordering: true")
	b := parseConfigString(t, "max_starve: 12:00:00\nhelp_starving_jobs: true non_prime\nsort_by: short_walltime_first prime\nstrict_fifo: true")
	var fa, fb strings.Builder
	a.Format(&fa)
	b.Format(&fb)
	if fa.String() != fb.String() {
		t.Errorf("spellings differ in effect:\n%s\nvs\n%s", fa.String(), fb.String())
	}
	for _, alias := range []string{"starve_max", "strict_ordering", "cmp_job_walltime_asc", "non-prime"} {
		if strings.Contains(fa.String(), alias) {
			t.Errorf("Format wrote %s rather than the canonical name:\n%s", alias, fa.String())
		}
	}
	// The two spellings of one option are one option: the later line wins
	// and a cross-option check points at it.
	_, err := ParseConfig(strings.NewReader("help_starving_jobs: true\nmax_starve: 1:00:00\nstarve_max: 0\n"), "sched_config")
	wantProblems(t, err, "sched_config:1: help_starving_jobs is on but max_starve is 0")
}

// An unknown name is refused with its line and, when one is close, the
// name the admin probably meant.
func TestConfigUnknownSuggests(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, want string }{
		{"round_robbin: true", `sched_config:1: unknown option "round_robbin"; did you mean round_robin?`},
		{"By_Queue: true", `sched_config:1: unknown option "By_Queue"; did you mean by_queue?`},
		{"strictfifo: true", `sched_config:1: unknown option "strictfifo"; did you mean strict_fifo?`},
		{"max_strave: 1:00:00", `sched_config:1: unknown option "max_strave"; did you mean max_starve?`},
		{"starvemax: 1:00:00", `sched_config:1: unknown option "starvemax"; did you mean starve_max?`},
		{"sort_queue: true", `sched_config:1: unknown option "sort_queue"; did you mean sort_queues?`},
		{"load_balance: true", `sched_config:1: unknown option "load_balance"; did you mean load_balancing?`},
		{"debuglevel: 3", `sched_config:1: unknown option "debuglevel"; did you mean debug_level?`},
		{"\n\nnonsense: 1", `sched_config:3: unknown option "nonsense"`},
		{"x: 1", `sched_config:1: unknown option "x"`},
		{strings.Repeat("by_queue", 20) + ": 1", `sched_config:1: unknown option "` + strings.Repeat("by_queue", 20) + `"`},
		{"sort_by: shortest_jobs_first", `sched_config:1: sort_by: unknown sort "shortest_jobs_first"; did you mean shortest_job_first?`},
		{"sort_by: smallest_mem_first", `sched_config:1: sort_by: unknown sort "smallest_mem_first"; did you mean smallest_memory_first?`},
		{"sort_by: random", `sched_config:1: sort_by: unknown sort "random" (one of no_sort, shortest_job_first,`},
	}
	for _, tt := range tests {
		_, err := ParseConfig(strings.NewReader(tt.text), "sched_config")
		errs, ok := AsErrors(err)
		if !ok || len(errs) != 1 {
			t.Errorf("%q: %v", tt.text, err)
			continue
		}
		got := errs[0].String()
		exact := !strings.HasSuffix(tt.want, ",")
		if exact && got != tt.want || !exact && !strings.HasPrefix(got, tt.want) {
			t.Errorf("%q:\n got %s\nwant %s", tt.text, got, tt.want)
		}
		if !strings.Contains(tt.want, "did you mean") && strings.Contains(got, "did you mean") {
			t.Errorf("%q: nothing is close, yet: %s", tt.text, got)
		}
	}
}

// Options of the old scheduler load with a warning naming them.
func TestConfigObsoleteOptions(t *testing.T) {
	t.Parallel()
	c := parseConfigString(t, "by_queue: true\ndebug_level: 5\n")
	if len(c.Warnings) != 1 || !strings.HasPrefix(c.Warnings[0].String(),
		"sched_config:2: debug_level is an option of the old scheduler that means nothing now") {
		t.Errorf("warnings: %v", c.Warnings)
	}
	if !c.Prime.ByQueue {
		t.Error("the rest of the file was not applied")
	}
	for _, name := range ObsoleteOptions() {
		c := parseConfigString(t, name+": anything all")
		if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Msg, name) {
			t.Errorf("%s: warnings %v", name, c.Warnings)
		}
		var f strings.Builder
		c.Format(&f)
		if strings.Contains(f.String(), name) {
			t.Errorf("Format wrote the obsolete %s", name)
		}
	}
	if !slices.Contains(ObsoleteOptions(), "debug_level") {
		t.Error("debug_level is not listed as obsolete")
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"round_robin", "round_robbin", 1}, {"strict_fifo", "strcit_fifo", 1},
		{"ab", "ba", 1}, {"abc", "ca", 3},
	} {
		if got := editDistance(tt.a, tt.b); got != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
		if got := editDistance(tt.b, tt.a); got != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.d)
		}
	}
}
