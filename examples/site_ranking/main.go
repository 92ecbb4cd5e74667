// Command site_ranking is an example site scheduler that reuses the whole
// FIFO policy of pbs_sched (package policy/fifo: its order, checks,
// backfilling, fair share, dedicated and prime time, every sched_config
// option) and changes one extension point: the node ranking. Jobs go to
// the node that fits them most tightly (best fit: fewest cpus left free
// after the job), which packs small jobs together and keeps whole nodes
// free for large ones. sched_config's load balancing still decides for
// the time-shared nodes it covers.
//
// It replaces pbs_sched: run it instead, with the same pbs.conf and
// sched_priv. It runs no activation filters (pbs_sched's are the
// activation package's, internal to this module); it says so when
// sched_config names some.
package main

import (
	"gopbs/policy/fifo"
	"gopbs/sched"
)

func main() { sched.Main("site_ranking", newPolicy()) }

// newPolicy is the FIFO policy with the best-fit ranking.
func newPolicy() *fifo.Policy {
	p := fifo.DefaultPipeline()
	p.Ranking = bestFit{then: p.Ranking}
	return &fifo.Policy{Pipeline: p}
}
