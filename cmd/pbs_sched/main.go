// Command pbs_sched is the default scheduler: the FIFO policy
// (sched/fifo) with activation filters (sched/activation) on
// the scheduler toolkit (package sched). The
// server connects to it on PBS_SCHEDULER_SERVICE_PORT to start each cycle;
// its policy files are in PBS_HOME/sched_priv (installed with defaults on
// first start) and its log in PBS_HOME/sched_logs. It stays in the
// foreground.
package main

import (
	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/activation"
)

func main() { sched.Main("pbs_sched", activation.NewPolicy()) }

// The FIFO policy keeps fair-share usage through the toolkit, and shows
// it in the metrics.
var (
	_ sched.UsageKeeper   = (*activation.Policy)(nil)
	_ sched.UsageReporter = (*activation.Policy)(nil)
)
