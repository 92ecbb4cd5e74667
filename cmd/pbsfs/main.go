// Command pbsfs shows and changes the scheduler's fair-share usage, as
// OpenPBS's pbsfs does: the resource_group tree with each entity's
// shares, usage and priority factor, one entity's line, and (with the
// scheduler stopped) decay, set or reset usage.
//
//	pbsfs [-t]            the tree
//	pbsfs -p              every entity, one per line
//	pbsfs -g NAME         one entity
//	pbsfs -d              decay all usage once (sched_config's half_life
//	                      factor, 0.5)
//	pbsfs -s NAME USAGE   set an entity's usage (cpu seconds)
//	pbsfs -r              reset all usage to zero (this project's addition)
//
// It reads PBS_HOME/sched_priv (pbs.conf). Writing needs the scheduler's
// lock: while pbs_sched runs it would overwrite the change, so pbsfs
// refuses and says so.
package main

import "github.com/gopbs/gopbs/internal/cli/pbsfs"

func main() { pbsfs.Main() }
