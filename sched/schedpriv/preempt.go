package schedpriv

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Preemption as PBS Pro's sched_config set it (and OpenPBS's scheduler
// object keeps it): which jobs outrank which (preempt_prio, with
// preempt_queue_prio saying which queues are express queues), how a job
// is preempted (preempt_order: suspend, checkpoint, requeue, chosen by
// how much of its walltime is left) and which jobs go first
// (preempt_sort). preemptive_sched turns it on, per side of prime time.

// PreemptClass is a set of the reasons a job may have for its preemption
// rank, one bit each (OpenPBS's preempt_status bits).
type PreemptClass uint8

// Preemption classes, by their preempt_prio names.
const (
	// PreemptExpress: the job is in an express queue, one whose priority
	// is at least preempt_queue_prio.
	PreemptExpress PreemptClass = 1 << iota
	// PreemptStarving: the job is starving (help_starving_jobs).
	PreemptStarving
	// PreemptFairshare: its fair-share entity has used more than its
	// share.
	PreemptFairshare
	// PreemptQueueSoft and PreemptServerSoft: the job is over a queue's
	// or the server's soft limits.
	PreemptQueueSoft
	PreemptServerSoft
	// PreemptNormal: none of the others; a job has it alone or not at
	// all.
	PreemptNormal
)

// preemptClassNames are the classes' names in preempt_prio, in bit order.
var preemptClassNames = [...]string{"express_queue", "starving_jobs", "fairshare", "queue_softlimits", "server_softlimits", "normal_jobs"}

// PreemptClassNames lists the names preempt_prio knows.
func PreemptClassNames() []string { return slices.Clone(preemptClassNames[:]) }

// String names the classes of c joined by '+', as preempt_prio writes a
// level.
func (c PreemptClass) String() string {
	var parts []string
	for i, name := range preemptClassNames {
		if c&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	return strings.Join(parts, "+")
}

// PreemptPrio is preempt_prio: the preemption levels, highest first, each
// the classes a job must all have to be at that level. A job preempts
// only jobs of a lower rank (Rank).
type PreemptPrio []PreemptClass

// DefaultPreemptPrio is preempt_prio when the file does not set it
// (OpenPBS's default).
var DefaultPreemptPrio = PreemptPrio{PreemptExpress, PreemptNormal}

// MaxPreemptLevels bounds preempt_prio: one level per combination of the
// classes but normal_jobs, and normal_jobs.
const MaxPreemptLevels = 1<<5 + 1

// ParsePreemptPrio reads preempt_prio as OpenPBS does: levels separated by
// commas, highest first, each one or more class names joined by '+'
// ("express_queue, starving_jobs+fairshare, normal_jobs"). Blanks around
// names are allowed. A level listed twice, or normal_jobs with another
// class (a job is normal only when it has no other class), is refused:
// such a level could never apply.
func ParsePreemptPrio(s string) (PreemptPrio, error) {
	var out PreemptPrio
	for _, level := range strings.Split(s, ",") {
		level = strings.Trim(level, " \t")
		if level == "" {
			return nil, fmt.Errorf("%q has an empty level (levels are separated by commas)", s)
		}
		var c PreemptClass
		for _, name := range strings.Split(level, "+") {
			name = strings.Trim(name, " \t")
			i := slices.Index(preemptClassNames[:], name)
			if i < 0 {
				msg := fmt.Sprintf("%q is not a preemption level (%s)", name, strings.Join(preemptClassNames[:], ", "))
				if near := closest(name, preemptClassNames[:]); near != "" {
					msg += "; did you mean " + near + "?"
				}
				return nil, fmt.Errorf("%s", msg)
			}
			if c&(1<<i) != 0 {
				return nil, fmt.Errorf("level %q names %s twice", level, name)
			}
			c |= 1 << i
		}
		if c&PreemptNormal != 0 && c != PreemptNormal {
			return nil, fmt.Errorf("level %q: normal_jobs cannot be combined with another level (a job is normal only when none of the others applies)", level)
		}
		if slices.Contains(out, c) {
			return nil, fmt.Errorf("level %s is listed twice", c)
		}
		out = append(out, c)
	}
	if len(out) > MaxPreemptLevels {
		return nil, fmt.Errorf("%d levels: at most %d", len(out), MaxPreemptLevels)
	}
	return out, nil
}

// String writes p as preempt_prio reads it.
func (p PreemptPrio) String() string {
	parts := make([]string, len(p))
	for i, c := range p {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}

// Level is the level of a job with classes has: as OpenPBS matches it,
// the first of the levels, taken with the most classes first and then in
// the file's order, whose classes the job all has. A job with no other
// class is normal. It returns the index in p, and len(p) when no level
// applies (a normal job when normal_jobs is not listed ranks below every
// level).
func (p PreemptPrio) Level(has PreemptClass) int {
	if has&^PreemptNormal == 0 {
		has = PreemptNormal
	}
	best, bestBits := len(p), 0
	for i, c := range p {
		if has&c != c {
			continue
		}
		if n := bits.OnesCount8(uint8(c)); n > bestBits {
			best, bestBits = i, n
		}
	}
	if best == len(p) && has != PreemptNormal {
		// No level of its classes: it counts as a normal job.
		if i := slices.Index(p, PreemptNormal); i >= 0 {
			return i
		}
	}
	return best
}

// PreemptMethod is one way of preempting a job: a letter of
// preempt_order.
type PreemptMethod byte

// Preemption methods.
const (
	PreemptSuspend    PreemptMethod = 'S'
	PreemptCheckpoint PreemptMethod = 'C'
	PreemptRequeue    PreemptMethod = 'R'
)

// PreemptRange is one part of preempt_order: the methods, tried in order,
// for a job with between Low and High percent of its walltime left.
type PreemptRange struct {
	Methods string
	Low     int
	High    int
}

// PreemptOrder is preempt_order: the ranges from 100% of the walltime
// left down to 0%.
type PreemptOrder []PreemptRange

// DefaultPreemptOrder is preempt_order when the file does not set it:
// suspend, else checkpoint, else requeue, whatever the job has left.
var DefaultPreemptOrder = PreemptOrder{{Methods: "SCR", Low: 0, High: 100}}

// maxPreemptRanges is OpenPBS's PREEMPT_ORDER_MAX.
const maxPreemptRanges = 20

// ParsePreemptOrder reads preempt_order: methods (letters of S suspend, C
// checkpoint, R requeue, each at most once, tried in order), optionally
// followed by a percentage of the walltime left and the methods for jobs
// with at most that much left, and so on ("SCR 80 SC 50 S": SCR while more
// than 80% is left, SC down to more than 50%, S for the rest).
// Percentages go down, from 99 to 1.
func ParsePreemptOrder(s string) (PreemptOrder, error) {
	words := fields(s)
	if len(words) == 0 {
		return nil, fmt.Errorf("empty preempt_order")
	}
	var out PreemptOrder
	high := 100
	for i, w := range words {
		if i%2 == 1 {
			n, err := strconv.Atoi(w)
			if err != nil || n < 1 || n > 99 {
				return nil, fmt.Errorf("%q is not a percentage of walltime left from 1 to 99", w)
			}
			if n >= high {
				return nil, fmt.Errorf("percentage %d is not below %d: percentages of walltime left go down", n, high)
			}
			out[len(out)-1].Low = n + 1
			high = n
			if i == len(words)-1 {
				return nil, fmt.Errorf("percentage %d has no methods after it", n)
			}
			continue
		}
		if len(out) == maxPreemptRanges {
			return nil, fmt.Errorf("more than %d ranges", maxPreemptRanges)
		}
		for k := 0; k < len(w); k++ {
			switch m := w[k]; m {
			case byte(PreemptSuspend), byte(PreemptCheckpoint), byte(PreemptRequeue):
				if strings.IndexByte(w[:k], m) >= 0 {
					return nil, fmt.Errorf("%q names %c twice", w, m)
				}
			default:
				return nil, fmt.Errorf("%q: %q is not a method (S suspend, C checkpoint, R requeue)", w, string(rune(m)))
			}
		}
		out = append(out, PreemptRange{Methods: w, Low: 0, High: high})
	}
	return out, nil
}

// String writes o as preempt_order reads it.
func (o PreemptOrder) String() string {
	var parts []string
	for i, r := range o {
		if i > 0 {
			parts = append(parts, strconv.Itoa(r.High))
		}
		parts = append(parts, r.Methods)
	}
	return strings.Join(parts, " ")
}

// Methods are the methods for a job with percent of its walltime left
// (OpenPBS rounds it down to a whole percent; a job past its walltime has
// 1% left): those of the last range that holds it. A job without a
// walltime gets the first range's.
func (o PreemptOrder) Methods(percentLeft int) string {
	if len(o) == 0 {
		return ""
	}
	out := o[0].Methods
	for _, r := range o {
		if percentLeft <= r.High && percentLeft >= r.Low {
			out = r.Methods
		}
	}
	return out
}

// PreemptSortMinTimeSinceStart is preempt_sort's one value: among jobs
// of one rank, the one that started last is preempted first (it loses
// the least work).
const PreemptSortMinTimeSinceStart = "min_time_since_start"

// DefaultPreemptQueuePrio is preempt_queue_prio when the file does not
// set it (OpenPBS's default).
const DefaultPreemptQueuePrio = 150
