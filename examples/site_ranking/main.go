// Command site_ranking is an example site scheduler that reuses the whole
// FIFO policy of pbs_sched (package sched/fifo: its order, checks,
// backfilling, fair share, dedicated and prime time, every sched_config
// option) and changes one extension point: the node ranking. Jobs go to
// the node that fits them most tightly (best fit: fewest cpus left free
// after the job), which packs small jobs together and keeps whole nodes
// free for large ones. sched_config's load balancing still decides for
// the time-shared nodes it covers.
//
// It replaces pbs_sched: run it instead, with the same pbs.conf and
// sched_priv. It runs sched_config's activation filters as pbs_sched does
// (package sched/activation).
package main

import (
	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/activation"
)

func main() { sched.Main("site_ranking", newPolicy()) }

// newPolicy is pbs_sched's policy (FIFO with activation filters) with the
// best-fit ranking.
func newPolicy() *activation.Policy {
	p := activation.NewPolicy()
	p.Pipeline.Ranking = bestFit{then: p.Pipeline.Ranking}
	return p
}
