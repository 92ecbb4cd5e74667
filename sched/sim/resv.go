package sim

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/rrule"
	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched/core"
)

// Reservations in a replay: windows during which nodes are kept whole
// (a site's maintenance), confirmed from the start. The policy sees them
// on its calendar as pbs_sched sees confirmed reservations, so EASY
// drains the nodes before each window and starts nothing that would run
// into it; no job is killed.
//
// A reservations file has a line per reservation, blank lines and #
// comments aside:
//
//	name  start  duration  nodes  [rule]
//
// start is seconds from the trace's start, duration [[hh:]mm:]ss, nodes
// "all" or node names separated by commas, and rule an optional
// recurrence in pbs_rsub -r's syntax (internal/rrule, in UTC; COUNT or
// UNTIL required), at most maxSimOccurrences occurrences.

// maxSimOccurrences bounds a recurring reservation of a replay.
const maxSimOccurrences = 10000

// ParseReservations reads a reservations file for a replay on nodes
// whose trace starts at origin.
func ParseReservations(r io.Reader, nodes []*core.Node, origin time.Time) ([]*core.Resv, error) {
	var out []*core.Resv
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	seen := map[string]bool{}
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("reservations line %d: %s", line, fmt.Sprintf(format, args...))
		}
		if len(f) < 4 || len(f) > 5 {
			return nil, bad("want \"name start duration nodes [rule]\"")
		}
		if seen[f[0]] {
			return nil, bad("reservation %q twice", f[0])
		}
		seen[f[0]] = true
		start, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || start < 0 || start > 1<<40 {
			return nil, bad("start %q is not seconds from the trace's start", f[1])
		}
		secs, err := resc.ParseDuration(f[2])
		if err != nil || secs <= 0 || secs > 1<<32 {
			return nil, bad("duration %q is not [[hh:]mm:]ss", f[2])
		}
		var where []core.Chunk
		if f[3] == "all" {
			for _, n := range nodes {
				where = append(where, wholeNode(n))
			}
		} else {
			for _, name := range strings.Split(f[3], ",") {
				i := slices.IndexFunc(nodes, func(n *core.Node) bool { return n.Name == name })
				if i < 0 {
					return nil, bad("no node %q", name)
				}
				where = append(where, wholeNode(nodes[i]))
			}
		}
		first := origin.Add(time.Duration(start) * time.Second).UTC()
		starts := []time.Time{first}
		if len(f) == 5 {
			rule, err := rrule.Parse(f[4])
			if err != nil {
				return nil, bad("%v", err)
			}
			if time.Duration(secs)*time.Second > rule.Freq.MaxDuration() {
				return nil, bad("a %s occurrence lasts at most %v", rule.Freq, rule.Freq.MaxDuration())
			}
			if starts, err = rule.Occurrences(first, first.AddDate(20, 0, 0), maxSimOccurrences); err != nil {
				return nil, bad("%v", err)
			}
		}
		dur := time.Duration(secs) * time.Second
		rv := &core.Resv{ID: f[0], Queue: "resv:" + f[0], State: core.ResvConfirmed, Maintenance: true,
			Place: resc.Place{Sharing: resc.SharingExcl}, Duration: dur}
		for i, s := range starts {
			if i > 0 && s.Sub(starts[i-1]) < dur {
				return nil, bad("occurrences %d and %d overlap", i, i+1)
			}
			rv.Occurrences = append(rv.Occurrences, core.Occurrence{Start: s, Where: where})
		}
		out = append(out, rv)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reservations: %w", err)
	}
	return out, nil
}

// wholeNode is a chunk of everything n has.
func wholeNode(n *core.Node) core.Chunk {
	c := resc.NewChunk(1, nil)
	c.Amounts = n.Avail.Clone()
	return core.Chunk{Node: n.Name, Chunk: c}
}

// resvClock follows a replay's reservations: the ones a pass at a time
// sees (their occurrences not over), and the next moment a window ends.
type resvClock struct {
	all  []*core.Resv
	seen []*core.Resv // this pass's views, reused
	view []core.Resv
}

// at is the reservations as a pass at now sees them: each with the
// occurrences not over, running in its window, else confirmed.
func (c *resvClock) at(now time.Time) []*core.Resv {
	if len(c.all) == 0 {
		return nil
	}
	if c.view == nil {
		c.view = make([]core.Resv, len(c.all))
	}
	c.seen = c.seen[:0]
	for i, r := range c.all {
		k := 0
		for k < len(r.Occurrences) && !r.Occurrences[k].Start.Add(r.Duration).After(now) {
			k++
		}
		if k == len(r.Occurrences) {
			continue
		}
		v := &c.view[i]
		*v = *r
		v.Occurrences = r.Occurrences[k:]
		v.State = core.ResvConfirmed
		if !now.Before(v.Occurrences[0].Start) {
			v.State = core.ResvRunning
		}
		c.seen = append(c.seen, v)
	}
	return c.seen
}

// nextEnd is the first moment after t (seconds from origin) at which a
// window ends, or -1.
func (c *resvClock) nextEnd(t int64, origin time.Time) int64 {
	best := int64(-1)
	for _, r := range c.all {
		for _, o := range r.Occurrences {
			e := int64(o.Start.Add(r.Duration).Sub(origin) / time.Second)
			if e > t {
				if best < 0 || e < best {
					best = e
				}
				break
			}
		}
	}
	return best
}
