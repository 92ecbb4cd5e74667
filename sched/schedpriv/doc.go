// Package schedpriv reads and checks the scheduler's policy files in
// PBS_HOME/sched_priv: sched_config, holidays, resource_group and
// dedicated_time, plus the fair-share usage file, and ships the default
// files a new installation starts with.
//
// # Contract
//
// The package is pure: it never reads the clock, opens a path, watches
// files or opens sockets, so scheduling policies and the simulator can use
// its types (sched/core's purity test checks it). Parsers take an io.Reader
// and a file name used only in messages; LoadFS and LoadFSNamed take an
// fs.FS; anything that depends on the date takes a time.Time (and
// dedicated_time a *time.Location). The file-system side is package
// privdir (sched/schedpriv/privdir): Load reads a sched_priv directory,
// InstallDefaults fills a new one, ReadUsageFile and WriteUsageFile keep
// the usage file.
//
// Every parser reports all the problems of a file at once, as an Errors
// whose entries read "file:line: message", and returns a nil result on
// error so a scheduler keeps its previous settings rather than run a file it
// half understood. Findings that do not stop a file from being used are
// returned as Warnings (never printed).
//
// # Intended semantics, not the classic bugs
//
// The file formats are those of the PBS admin guide as implemented by the
// Torque/OpenPBS 2.3 fifo scheduler, with the OpenPBS extensions sites carry
// over. Where the classic code misbehaves, this package implements what the
// admin guide describes:
//
//   - sched_config booleans are true or false in any case; any other word is
//     an error (the classic parser took it as true). Unknown option names are
//     errors that name the closest known option (edit distance, any case).
//     key ... non_prime sets the non-prime key list only.
//     fair_share with no usage decay (half_life 0) and help_starving_jobs with
//     max_starve 0 are errors rather than a hang or an all-starving queue.
//   - A holiday is non-prime the whole day. "weekday all none" is always
//     prime. Prime time begins at exactly the minute given and ends at
//     exactly the minute non-prime time starts. A window whose non-prime
//     start is earlier than its prime start crosses midnight.
//   - A resource_group entry whose parent is not defined on an earlier line
//     is an error (the classic scheduler created the parent under unknown).
//   - Dedicated-time years may have two digits at either end alike; dates and
//     times are range-checked and windows may not overlap.
//   - The usage file is a versioned text format written atomically, with no
//     limit on name length.
//
// # sched_config
//
// Lines are "name[:] value [prime|non_prime|all|none]"; the suffix is
// matched in any case, non-prime (the admin guide's spelling) works as
// non_prime, and it applies to the options marked in Settings (those in
// Config take none, or all/none). Values may be double-quoted to hold
// white space (OpenPBS writes resources: "ncpus, mem"). Classic options:
// round_robin, by_queue, strict_fifo, fair_share, load_balancing,
// load_balancing_rr, help_starving_jobs, sort_queues, sort_by, key
// (prime-dependent); log_filter, dedicated_prefix (at most 15 characters),
// ignore_queue (at most 16), max_starve (also spelt starve_max), half_life,
// unknown_shares, sync_time. Sort names are the classic ones plus
// cmp_job_walltime_asc for short_walltime_first (SortAliases). Options of
// the old scheduler that mean nothing now (debug_level; ObsoleteOptions)
// load with a warning naming them. Backfilling: backfill (prime-dependent,
// on unless turned off) and backfill_depth (how many jobs after the first
// blocked one are considered: a positive number, default 1000, or all;
// OpenPBS made this a server attribute). OpenPBS options kept:
// strict_ordering (another spelling of strict_fifo), backfill_prime,
// prime_spill, preemptive_sched, job_sort_key, node_sort_key,
// smp_cluster_dist (prime-dependent); primetime_prefix,
// nonprimetime_prefix, prime_exempt_anytime_queues, resources,
// fairshare_usage_res, fairshare_entity, fairshare_decay_time,
// fairshare_decay_factor, fairshare_enforce_no_shares. Preemption, on
// where preemptive_sched is: preempt_queue_prio (150), preempt_prio
// ("express_queue, normal_jobs"), preempt_order ("SCR") and preempt_sort
// (min_time_since_start), no suffix, read as PBS Pro read them
// (preempt.go).
// Activation filters (DESIGN §7): activation_filter (one absolute path
// per line, in chain order), filter_timeout (how long each may run,
// 15 s) and default_hold_duration (how long exit code 3 holds a job
// without a hold_until, 60..604800 s, 900 s); no suffix. Other
// OpenPBS options (the old preemption switches, peer scheduling, provisioning,
// dynamic resources; see IgnoredOptions) are accepted with a warning and
// ignored. A missing option takes the admin guide's default, the value it
// shows in braces (by_queue true, sort_by shortest_job_first, log_filter
// 256, dedicated_prefix ded, half_life 24:00:00, unknown_shares 10,
// sync_time 1:00:00), so that the guide's own example, which turns
// fair_share on without a half_life line, loads; the others are off or
// zero, except backfilling, which is on (NewConfig). dedicated_prefix: ""
// says there are no dedicated-time queues. A file that sets
// fairshare_decay_time and no half_life decays by its own setting.
//
// # holidays
//
// YEAR, day rows (weekday, saturday, sunday and OpenPBS's monday..friday,
// each "P NP" with HHMM, all or none) and holiday lines giving the day of the
// year (1 = January 1) followed by free text; the old "yyyy P NP" header is
// read too. Without a file or a YEAR line all time is prime. Rows missing
// for a day make it all prime. Holiday day numbers apply in the file's YEAR
// only; Holidays.YearWarning (and Files.Check) report a file for another
// year, which pbs_sched logs and shows as the server's comment.
// Calendar-date holiday lines ("1/1 New Year") are not a PBS format and are
// rejected.
//
// # resource_group
//
// "name cresgrp parent shares" builds a Tree under root, beside unknown
// (which holds unknown_shares). Percentages follow the admin guide: shares
// over the sum of the siblings' shares, times the parent's percentage.
// Tree.AddUnknown adds a user missing from the file under unknown with one
// share, changing the tree, which belongs to its caller.
//
// # dedicated_time
//
// "MM/DD/YYYY HH:MM MM/DD/YYYY HH:MM" per window, in a given location.
// Dedicated time is strictly inside a window. Past windows are kept; use
// Dedicated.Upcoming to drop them.
//
// # usage
//
// "gopbs-usage 2", a "decayed<TAB>time" line, "e<TAB>entity<TAB>usage"
// lines, "j<TAB>job<TAB>cpu seconds counted" lines for the jobs still
// followed, and a last "sum<TAB>crc32c" line (see Encode); version 1
// files (entities only) still read. Names are %-escaped.
// privdir.WriteUsageFile writes it through a synced temporary file and a
// rename; a file Decode refuses is set aside by privdir.SetAsideUsageFile.
//
// # Defaults
//
// A new installation gets the admin guide's shipped policy (Default,
// Defaults): jobs by queue priority in prime and non-prime time, smallest
// memory first within a queue, help for jobs starving over 24 hours,
// backfilling on; no fair-share groups and no dedicated time. sched_config,
// resource_group and dedicated_time are embedded from defaults/; the
// holidays file is made for a given year (DefaultHolidays): prime time
// 04:00-17:30 on weekdays, weekends non-prime, and the US federal holidays
// observed that year (USHolidays) non-prime, each as its day of the year
// with the date and name as comment. Each file says in comments what it
// does and how to change it. privdir.InstallDefaults writes the missing
// ones, the holidays for the year it is given (pbs_sched: the current
// year); LoadFS replaces a missing resource_group or dedicated_time by its
// default and takes a missing holidays file as all prime time.
package schedpriv
