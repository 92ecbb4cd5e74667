package schedpriv

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// option describes one sched_config option: how a value is read and how the
// current value is written back (Config.Format). Exactly one of setS (options
// with a prime/non-prime suffix) and setC is set, unless ignored.
type option struct {
	name string
	// setS validates a value and returns how to apply it to one side's
	// settings; validation happens once even when the value goes to both.
	setS  func(v string) (func(*Settings), error)
	showS func(*Settings) []string
	setC  func(c *Config, v string) error
	showC func(*Config) []string
	// aliasOf names the option this one is another spelling of; Format
	// writes only the canonical one.
	aliasOf string
	// twoWord: the value is "resource HIGH|LOW" and may be written unquoted.
	twoWord bool
	// spaced: the value usually holds white space, so it goes in double
	// quotes; an unquoted one is refused with that hint.
	spaced bool
	// ignored: an OpenPBS option accepted with a warning and not kept.
	ignored bool
	// obsolete: an option of the old scheduler that means nothing now,
	// accepted with a warning that says so (and why, in hint).
	obsolete bool
	hint     string
}

// skipped reports whether a line with this option is read only to be
// reported: nothing of it is kept, so Format never writes it.
func (o option) skipped() bool { return o.ignored || o.obsolete }

// configOptions lists every option in the order Format writes them. It is
// built per call rather than kept in a package variable so that no shared
// mutable state exists.
func configOptions() []option {
	boolS := func(name string, f func(*Settings) *bool) option {
		return option{name: name,
			setS: func(v string) (func(*Settings), error) {
				b, err := parseBool(v)
				return func(s *Settings) { *f(s) = b }, err
			},
			showS: func(s *Settings) []string { return []string{strconv.FormatBool(*f(s))} },
		}
	}
	boolC := func(name string, f func(*Config) *bool) option {
		return option{name: name,
			setC: func(c *Config, v string) error {
				b, err := parseBool(v)
				*f(c) = b
				return err
			},
			showC: func(c *Config) []string { return []string{strconv.FormatBool(*f(c))} },
		}
	}
	enumS := func(name string, f func(*Settings) *string, values ...string) option {
		return option{name: name,
			setS: func(v string) (func(*Settings), error) {
				var err error
				if !slices.Contains(values, v) {
					err = fmt.Errorf("%q is not %s", v, strings.Join(values, ", "))
				}
				return func(s *Settings) { *f(s) = v }, err
			},
			showS: func(s *Settings) []string { return []string{*f(s)} },
		}
	}
	durC := func(name string, f func(*Config) *time.Duration) option {
		return option{name: name,
			setC: func(c *Config, v string) error {
				d, err := parseDuration(v)
				*f(c) = d
				return err
			},
			showC: func(c *Config) []string { return []string{formatDuration(*f(c))} },
		}
	}
	countC := func(name string, f func(*Config) *int) option {
		return option{name: name,
			setC: func(c *Config, v string) error {
				n, err := parseCount(v)
				*f(c) = n
				return err
			},
			showC: func(c *Config) []string { return []string{strconv.Itoa(*f(c))} },
		}
	}
	// nameC: a single name; empty (the default) is not written back.
	nameC := func(name string, f func(*Config) *string) option {
		return option{name: name,
			setC: func(c *Config, v string) error {
				s, err := parseName(v)
				if err != nil {
					return err
				}
				*f(c) = s
				return nil
			},
			showC: func(c *Config) []string {
				if *f(c) == "" {
					return nil
				}
				return []string{quote(*f(c))}
			},
		}
	}
	resSortS := func(name string, f func(*Settings) *[]ResourceSort) option {
		return option{name: name, twoWord: true,
			setS: func(v string) (func(*Settings), error) {
				rs, err := parseResourceSort(v)
				return func(s *Settings) { *f(s) = append(*f(s), rs) }, err
			},
			showS: func(s *Settings) []string {
				var out []string
				for _, rs := range *f(s) {
					out = append(out, quote(rs.String()))
				}
				return out
			},
		}
	}
	ignored := func(names ...string) []option {
		out := make([]option, len(names))
		for i, n := range names {
			out[i] = option{name: n, ignored: true}
		}
		return out
	}

	opts := []option{
		boolS("round_robin", func(s *Settings) *bool { return &s.RoundRobin }),
		boolS("by_queue", func(s *Settings) *bool { return &s.ByQueue }),
		boolS("strict_fifo", func(s *Settings) *bool { return &s.StrictFIFO }),
		boolS("fair_share", func(s *Settings) *bool { return &s.FairShare }),
		boolS("load_balancing", func(s *Settings) *bool { return &s.LoadBalancing }),
		boolS("load_balancing_rr", func(s *Settings) *bool { return &s.LoadBalancingRR }),
		boolS("help_starving_jobs", func(s *Settings) *bool { return &s.HelpStarvingJobs }),
		boolS("sort_queues", func(s *Settings) *bool { return &s.SortQueues }),
		{name: "sort_by",
			setS: func(v string) (func(*Settings), error) {
				k, err := parseSortKey(v)
				return func(s *Settings) { s.SortBy = k }, err
			},
			showS: func(s *Settings) []string { return []string{string(s.SortBy)} },
		},
		{name: "key",
			setS: func(v string) (func(*Settings), error) {
				k, err := parseSortKey(v)
				if err == nil && (k == MultiSort || k == NoSort) {
					err = fmt.Errorf("%s cannot be a key of multi_sort", k)
				}
				return func(s *Settings) { s.Keys = append(s.Keys, k) }, err
			},
			showS: func(s *Settings) []string {
				var out []string
				for _, k := range s.Keys {
					out = append(out, string(k))
				}
				return out
			},
		},
		countC("log_filter", func(c *Config) *int { return &c.LogFilter }),
		{name: "dedicated_prefix",
			// "" (written so) means no dedicated-time queues: the default
			// is ded, so an absent line cannot say it.
			setC: func(c *Config, v string) error {
				if v == "" {
					c.DedicatedPrefix = ""
					return nil
				}
				s, err := parseName(v)
				if err != nil {
					return err
				}
				if len(s) > MaxDedicatedPrefix {
					return fmt.Errorf("%q is longer than %d characters", s, MaxDedicatedPrefix)
				}
				c.DedicatedPrefix = s
				return nil
			},
			showC: func(c *Config) []string {
				if c.DedicatedPrefix == "" {
					return []string{`""`}
				}
				return []string{quote(c.DedicatedPrefix)}
			},
		},
		{name: "ignore_queue",
			setC: func(c *Config, v string) error {
				q, err := parseName(v)
				if err != nil {
					return err
				}
				if len(c.IgnoreQueues) >= MaxIgnoreQueues {
					return fmt.Errorf("more than %d queues ignored", MaxIgnoreQueues)
				}
				c.IgnoreQueues = append(c.IgnoreQueues, q)
				return nil
			},
			showC: func(c *Config) []string {
				var out []string
				for _, q := range c.IgnoreQueues {
					out = append(out, quote(q))
				}
				return out
			},
		},
		durC("max_starve", func(c *Config) *time.Duration { return &c.MaxStarve }),
		durC("half_life", func(c *Config) *time.Duration { return &c.HalfLife }),
		countC("unknown_shares", func(c *Config) *int { return &c.UnknownShares }),
		durC("sync_time", func(c *Config) *time.Duration { return &c.SyncTime }),

		// OpenPBS options kept in the configuration.
		boolS("backfill", func(s *Settings) *bool { return &s.Backfill }),
		{name: "backfill_depth",
			setC: func(c *Config, v string) error {
				d, err := parseBackfillDepth(v)
				if err == nil {
					c.BackfillDepth = d
				}
				return err
			},
			showC: func(c *Config) []string {
				if c.BackfillDepth == BackfillDepthAll {
					return []string{"all"}
				}
				return []string{strconv.Itoa(c.BackfillDepth)}
			},
		},
		boolS("backfill_prime", func(s *Settings) *bool { return &s.BackfillPrime }),
		{name: "prime_spill",
			setS: func(v string) (func(*Settings), error) {
				d, err := parseDuration(v)
				return func(s *Settings) { s.PrimeSpill = d }, err
			},
			showS: func(s *Settings) []string { return []string{formatDuration(s.PrimeSpill)} },
		},
		boolS("preemptive_sched", func(s *Settings) *bool { return &s.PreemptiveSched }),
		resSortS("job_sort_key", func(s *Settings) *[]ResourceSort { return &s.JobSortKeys }),
		resSortS("node_sort_key", func(s *Settings) *[]ResourceSort { return &s.NodeSortKeys }),
		{name: "job_sort_formula", spaced: true,
			setC: func(c *Config, v string) error {
				f, err := parseFormula(v)
				if err == nil {
					c.JobSortFormula = f
				}
				return err
			},
			showC: func(c *Config) []string {
				if c.JobSortFormula == nil {
					return nil
				}
				return []string{quote(c.JobSortFormula.String())}
			},
		},
		enumS("scheduling_mode", func(s *Settings) *string { return &s.SchedulingMode }, ModeQueued, ModeBalanced),
		enumS("priority_bias", func(s *Settings) *string { return &s.PriorityBias }, "none", "medium", "high"),
		enumS("shrink", func(s *Settings) *string { return &s.Shrink }, "graceful", "immediate"),
		{name: "shrink_grace",
			setS: func(v string) (func(*Settings), error) {
				d, err := parseDuration(v)
				return func(s *Settings) { s.ShrinkGrace = d }, err
			},
			showS: func(s *Settings) []string { return []string{formatDuration(s.ShrinkGrace)} },
		},
		{name: "smp_cluster_dist",
			setS: func(v string) (func(*Settings), error) {
				var err error
				switch v {
				case "pack", "round_robin", "lowest_load":
				default:
					err = fmt.Errorf("%q is not pack, round_robin or lowest_load", v)
				}
				return func(s *Settings) { s.SMPClusterDist = v }, err
			},
			showS: func(s *Settings) []string { return []string{s.SMPClusterDist} },
		},
		nameC("primetime_prefix", func(c *Config) *string { return &c.PrimetimePrefix }),
		nameC("nonprimetime_prefix", func(c *Config) *string { return &c.NonprimetimePrefix }),
		boolC("prime_exempt_anytime_queues", func(c *Config) *bool { return &c.PrimeExemptAnytimeQueues }),
		{name: "resources", spaced: true,
			setC: func(c *Config, v string) error {
				l, err := parseNameList(v)
				if err == nil {
					c.Resources = l
				}
				return err
			},
			showC: func(c *Config) []string {
				if len(c.Resources) == 0 {
					return nil
				}
				return []string{quote(strings.Join(c.Resources, ", "))}
			},
		},
		{name: "fairshare_usage_res",
			setC: func(c *Config, v string) error {
				switch strings.ReplaceAll(v, " ", "") {
				case UsageCput:
					c.FairshareUsageRes = UsageCput
				case UsageHeld, "walltime*ncpus":
					c.FairshareUsageRes = UsageHeld
				default:
					return fmt.Errorf("%q: fair share charges %s (cpu time used) or %s (cpus held over time)", v, UsageCput, UsageHeld)
				}
				return nil
			},
			showC: func(c *Config) []string { return []string{c.FairshareUsageRes} },
		},
		{name: "fairshare_entity",
			setC: func(c *Config, v string) error {
				switch v {
				case "euser", "egroup", "Account_Name", "queue", "egroup:euser":
					c.FairshareEntity = v
					return nil
				}
				return fmt.Errorf("%q is not euser, egroup, Account_Name, queue or egroup:euser", v)
			},
			showC: func(c *Config) []string { return []string{c.FairshareEntity} },
		},
		durC("fairshare_decay_time", func(c *Config) *time.Duration { return &c.FairshareDecayTime }),
		{name: "fairshare_decay_factor",
			setC: func(c *Config, v string) error {
				f, err := parseDecayFactor(v)
				if err == nil {
					c.FairshareDecayFactor = f
				}
				return err
			},
			showC: func(c *Config) []string {
				return []string{strconv.FormatFloat(c.FairshareDecayFactor, 'g', -1, 64)}
			},
		},
		boolC("fairshare_enforce_no_shares", func(c *Config) *bool { return &c.FairshareEnforceNoShares }),

		// Activation filters: one line per program, in chain order.
		{name: "activation_filter",
			setC: func(c *Config, v string) error {
				p, err := parseFilterPath(v)
				if err == nil {
					c.ActivationFilters = append(c.ActivationFilters, p)
				}
				return err
			},
			showC: func(c *Config) []string {
				var out []string
				for _, p := range c.ActivationFilters {
					out = append(out, quote(p))
				}
				return out
			},
		},
		{name: "filter_timeout",
			setC: func(c *Config, v string) error {
				d, err := parseDuration(v)
				if err == nil && d <= 0 {
					err = fmt.Errorf("%q: a filter needs at least a second", v)
				}
				if err == nil {
					c.FilterTimeout = d
				}
				return err
			},
			showC: func(c *Config) []string { return []string{formatDuration(c.FilterTimeout)} },
		},
		{name: "default_hold_duration",
			setC: func(c *Config, v string) error {
				d, err := parseDuration(v)
				if err == nil && (d < MinHoldDuration || d > MaxHoldDuration) {
					err = fmt.Errorf("%q is not between %d and %d seconds", v, int(MinHoldDuration/time.Second), int(MaxHoldDuration/time.Second))
				}
				if err == nil {
					c.DefaultHoldDuration = d
				}
				return err
			},
			showC: func(c *Config) []string { return []string{formatDuration(c.DefaultHoldDuration)} },
		},

		// Preemption (preempt.go): no suffix, as in PBS Pro.
		{name: "preempt_queue_prio",
			setC: func(c *Config, v string) error {
				n, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("%q is not a queue priority (a whole number)", v)
				}
				c.PreemptQueuePrio = n
				return nil
			},
			showC: func(c *Config) []string { return []string{strconv.Itoa(c.PreemptQueuePrio)} },
		},
		{name: "preempt_prio", spaced: true,
			setC: func(c *Config, v string) error {
				p, err := ParsePreemptPrio(v)
				if err == nil {
					c.PreemptPrio = p
				}
				return err
			},
			showC: func(c *Config) []string { return []string{quote(c.PreemptPrio.String())} },
		},
		{name: "preempt_order", spaced: true,
			setC: func(c *Config, v string) error {
				o, err := ParsePreemptOrder(v)
				if err == nil {
					c.PreemptOrder = o
				}
				return err
			},
			showC: func(c *Config) []string { return []string{quote(c.PreemptOrder.String())} },
		},
		{name: "preempt_sort",
			setC: func(c *Config, v string) error {
				if v != PreemptSortMinTimeSinceStart {
					return fmt.Errorf("%q: the one order is %s (among jobs of one rank, the last started first)", v, PreemptSortMinTimeSinceStart)
				}
				c.PreemptSort = v
				return nil
			},
			showC: func(c *Config) []string { return []string{c.PreemptSort} },
		},
	}
	// OpenPBS options a site may carry over that this scheduler does not
	// implement (the old preemption switches, peer scheduling, provisioning, dynamic
	// resources, NAS and deprecated SGI options): read and reported.
	opts = append(opts, ignored(
		"mom_resources", "server_dyn_res", "peer_queue", "peer_translation",
		"preempt_suspend", "preempt_checkpoint", "preempt_requeue", "preempt_attempts",
		"preempt_starving", "preempt_fairshare", "dont_preempt_starving", "susp_threshold",
		"sort_nodes", "node_group_key", "resource_unset_infinite", "provision_policy",
		"max_job_check", "update_comments", "resv_confirm_ignore", "allow_aoe_calendar",
		"assign_ssinodes", "cpus_per_ssinode", "mem_per_ssinode",
	)...)
	// Options of the old scheduler (OpenPBS 2.3 and before) that no
	// longer mean anything: a site's file keeps loading, and the admin
	// learns the line does nothing.
	opts = append(opts,
		option{name: "debug_level", obsolete: true,
			hint: "the old scheduler's debugging switch; log_filter chooses what sched_logs shows"},
	)
	// Other spellings of options, as the admin guide and OpenPBS write
	// them: each reads exactly like the option it stands for.
	return withAliases(opts, map[string]string{
		"strict_ordering": "strict_fifo", // OpenPBS
		"starve_max":      "max_starve",  // the admin guide's spelling
	})
}

// withAliases appends, for each alias, a copy of the option it names
// marked aliasOf, so that parsing it is parsing that option and Format
// writes only the canonical name. Aliases are added in name order, which
// keeps configOptions deterministic.
func withAliases(opts []option, aliases map[string]string) []option {
	names := make([]string, 0, len(aliases))
	for a := range aliases {
		names = append(names, a)
	}
	slices.Sort(names)
	for _, a := range names {
		i := slices.IndexFunc(opts, func(o option) bool { return o.name == aliases[a] })
		if i < 0 {
			// A misspelt target is a programming error the tests catch
			// (TestConfigSpellings); skipping keeps the package free of panics.
			continue
		}
		o := opts[i]
		o.name, o.aliasOf = a, opts[i].name
		opts = append(opts, o)
	}
	return opts
}

func optionIndex() map[string]option {
	opts := configOptions()
	m := make(map[string]option, len(opts))
	for _, o := range opts {
		m[o.name] = o
	}
	return m
}

// IgnoredOptions lists the OpenPBS option names ParseConfig accepts with a
// warning and otherwise ignores.
func IgnoredOptions() []string {
	return optionNames(func(o option) bool { return o.ignored })
}

// ObsoleteOptions lists the options of the old scheduler that mean nothing
// now (debug_level): ParseConfig accepts them with a warning naming them.
func ObsoleteOptions() []string {
	return optionNames(func(o option) bool { return o.obsolete })
}

// OptionNames lists every option name ParseConfig knows: the options in
// Format's order, then the ignored OpenPBS ones, the obsolete ones and the
// other spellings (strict_ordering, starve_max).
func OptionNames() []string {
	return optionNames(func(option) bool { return true })
}

func optionNames(keep func(option) bool) []string {
	var out []string
	for _, o := range configOptions() {
		if keep(o) {
			out = append(out, o.name)
		}
	}
	return out
}

// quote wraps a value in double quotes when it holds white space or would
// read as a comment; values never contain quotes themselves (the parsers
// refuse them).
func quote(s string) string {
	if strings.ContainsAny(s, " \t") || strings.HasPrefix(s, "#") {
		return `"` + s + `"`
	}
	return s
}
